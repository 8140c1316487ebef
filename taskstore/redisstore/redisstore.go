// Package redisstore is a taskstore.Store in Redis, with go-redis
// (github.com/redis/go-redis/v9, Redis's own Go client), for toolc serve
// replicas behind a load balancer: a task created through one replica is
// polled, answered and cancelled through any other, and a change is
// published on a Redis channel, so that a cancel reaches the replica that
// runs the task's handler wherever it arrives.
//
// Each task is a key that Redis expires at the task's TTL; each owner's
// tasks, and all of them, are sorted sets scored by expiry, which Create
// counts in a Lua script, atomically. Update is optimistic (WATCH and
// MULTI), retried on a conflicting write. A replica renews a lease of its
// own (Renew); a task whose runner's lease has lapsed died with it (see
// tasks.Manager).
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolc/toolc/taskstore"
)

const (
	prefix  = "toolc:task:"
	owners  = "toolc:owner:"
	all     = "toolc:tasks"
	channel = "toolc:tasks:changed"
	leases  = "toolc:replica:"
)

type store struct {
	rdb *redis.Client
	now func() time.Time

	subs   taskstore.Subscribers
	pubsub *redis.PubSub
	done   chan struct{}
}

var _ taskstore.Store = (*store)(nil)

// Open connects to the Redis server a redis://HOST:PORT/DB URL names (a
// password as redis://:PASSWORD@HOST:PORT/DB), and checks that it
// answers.
func Open(ctx context.Context, rawURL string) (taskstore.Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "redis" || u.Host == "" {
		return nil, fmt.Errorf("%q is not redis://HOST:PORT/DB", rawURL)
	}
	db := 0
	if p := strings.Trim(u.Path, "/"); p != "" {
		if db, err = strconv.Atoi(p); err != nil || db < 0 {
			return nil, fmt.Errorf("database %q of %s is not a number", p, u.Redacted())
		}
	}
	opts := &redis.Options{Addr: u.Host, DB: db}
	if u.User != nil {
		opts.Username = u.User.Username()
		opts.Password, _ = u.User.Password()
	}
	rdb := redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("%s: %w", u.Redacted(), err)
	}
	s := &store{rdb: rdb, now: time.Now, done: make(chan struct{})}
	s.pubsub = rdb.Subscribe(ctx, channel)
	if _, err := s.pubsub.Receive(pctx); err != nil { // the subscription's confirmation
		rdb.Close()
		return nil, fmt.Errorf("%s: subscribing: %w", u.Redacted(), err)
	}
	go s.relay()
	return s, nil
}

// relay hands each published id to the subscribers.
func (s *store) relay() {
	defer close(s.done)
	for msg := range s.pubsub.Channel() {
		s.subs.Tell(msg.Payload)
	}
}

// create adds a task within the caps, atomically: KEYS task, owner set,
// all set; ARGV data, expiry (ms), now (ms), per-owner cap, total cap, id.
var create = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
if tonumber(ARGV[4]) > 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 1 end
if tonumber(ARGV[5]) > 0 and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return 1 end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PXAT', ARGV[2]) then return 2 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[6])
redis.call('PEXPIREAT', KEYS[2], ARGV[2], 'GT')
redis.call('PEXPIREAT', KEYS[3], ARGV[2], 'GT')
return 0`)

func (s *store) Create(ctx context.Context, t *taskstore.Task, lim taskstore.Limits) error {
	data, err := taskstore.Encode(t)
	if err != nil {
		return err
	}
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return taskstore.ErrTooLarge
	}
	expires := t.Expires().UnixMilli()
	if expires <= s.now().UnixMilli() {
		return nil // expired already: as good as dropped
	}
	n, err := create.Run(ctx, s.rdb, []string{prefix + t.ID, owners + t.Owner, all},
		data, expires, s.now().UnixMilli(), lim.PerOwner, lim.Total, t.ID).Int()
	switch {
	case err != nil:
		return err
	case n == 1:
		return taskstore.ErrTooMany
	case n == 2:
		return taskstore.ErrExists
	}
	return nil
}

func (s *store) Get(ctx context.Context, id string) (*taskstore.Task, error) {
	data, err := s.rdb.Get(ctx, prefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	t, err := taskstore.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("task %s is corrupt: %w", id, err)
	}
	if !s.now().Before(t.Expires()) {
		return nil, taskstore.ErrNotFound
	}
	return t, nil
}

// maxTries bounds the optimistic retries of one Update.
const maxTries = 100

func (s *store) Update(ctx context.Context, id string, lim taskstore.Limits, change func(*taskstore.Task) error) (*taskstore.Task, error) {
	key := prefix + id
	var out *taskstore.Task
	for range maxTries {
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			data, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				return taskstore.ErrNotFound
			}
			if err != nil {
				return err
			}
			t, next, err := taskstore.Apply(id, data, s.now(), lim, change)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.SetArgs(ctx, key, next, redis.SetArgs{ExpireAt: t.Expires()})
				return nil
			})
			out = t
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue // another write came between: read again
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("task %s: %d conflicting writes in a row", id, maxTries)
}

func (s *store) Publish(ctx context.Context, id string) error {
	return s.rdb.Publish(ctx, channel, id).Err()
}

func (s *store) Subscribe(f func(id string)) (stop func()) { return s.subs.Add(f) }

// Renew renews the lease of a replica for ttl (taskstore.Leases).
func (s *store) Renew(ctx context.Context, replica string, ttl time.Duration) error {
	return s.rdb.Set(ctx, leases+replica, "1", ttl).Err()
}

// Alive reports whether a replica's lease holds (taskstore.Leases).
func (s *store) Alive(ctx context.Context, replica string) (bool, error) {
	n, err := s.rdb.Exists(ctx, leases+replica).Result()
	return n == 1, err
}

func (s *store) Close() error {
	err := s.pubsub.Close()
	<-s.done
	return errors.Join(err, s.rdb.Close())
}
