// Package boltstore is a taskstore.Store on local disk, in one file, with
// bbolt (go.etcd.io/bbolt): the embedded key/value engine of etcd, pure Go,
// with ACID transactions and nothing to run beside toolc. It is toolc
// serve's default store: tasks outlive a restart.
//
// One process holds the file at a time (bbolt locks it). A task that was
// working, or waiting for its client, when that process stopped can never
// finish, since its handler died with it: Open marks it failed, saying
// so.
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolc/toolc/taskstore"
)

var (
	tasksBucket  = []byte("tasks")  // id → taskstore.Encode(task)
	ownersBucket = []byte("owners") // owner \x00 id → nothing: each owner's tasks, to count them
	metaBucket   = []byte("meta")   // "count" → the number of tasks, big-endian uint64
	countKey     = []byte("count")
)

// Interrupted is the message of a task that Open found unfinished.
const Interrupted = "the server stopped (a restart or a crash) while the task was running, and the task did not finish"

// codeInternal is JSON-RPC's internal error, the code of an interrupted
// task.
const codeInternal = -32603

type store struct {
	db  *bolt.DB
	now func() time.Time

	subs taskstore.Subscribers
	stop chan struct{}
	done chan struct{}
}

var _ taskstore.Store = (*store)(nil)

// Open opens (or creates) the store in the file at path, and fails the
// tasks that a previous process left unfinished. It fails at once if
// another process holds the file.
func Open(path string) (taskstore.Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%s is in use by another process (one toolc serve per task file)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &store{db: db, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	if err := s.recover(); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	go s.sweepEvery(time.Minute)
	return s, nil
}

// recover creates the buckets, drops expired tasks, and fails the tasks
// that were not finished.
func (s *store) recover() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{tasksBucket, ownersBucket, metaBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		now := s.now()
		var failed [][2][]byte
		c := tx.Bucket(tasksBucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			t, err := taskstore.Decode(v)
			if err != nil || t.Status.Terminal() || !now.Before(t.Expires()) {
				continue // corrupt and expired ones go in the sweep below
			}
			t.Status, t.Questions = taskstore.Failed, nil
			t.Error = &taskstore.Error{Code: codeInternal, Message: Interrupted}
			t.StatusMessage, t.UpdatedAt = Interrupted, now.UTC()
			data, err := taskstore.Encode(t)
			if err != nil {
				return err
			}
			failed = append(failed, [2][]byte{bytes.Clone(k), data})
		}
		for _, kv := range failed {
			if err := tx.Bucket(tasksBucket).Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return s.sweep(tx)
	})
}

// sweep deletes the expired tasks, and those that do not decode.
func (s *store) sweep(tx *bolt.Tx) error {
	now := s.now()
	var gone []*taskstore.Task
	var corrupt [][]byte
	c := tx.Bucket(tasksBucket).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t, err := taskstore.Decode(v)
		switch {
		case err != nil:
			corrupt = append(corrupt, bytes.Clone(k))
		case !now.Before(t.Expires()):
			gone = append(gone, t)
		}
	}
	for _, t := range gone {
		if err := deleteTask(tx, t); err != nil {
			return err
		}
	}
	for _, k := range corrupt {
		if err := tx.Bucket(tasksBucket).Delete(k); err != nil {
			return err
		}
		addCount(tx, -1)
	}
	return nil
}

func (s *store) sweepEvery(d time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.db.Update(s.sweep)
		}
	}
}

func ownerKey(owner, id string) []byte { return []byte(owner + "\x00" + id) }

func deleteTask(tx *bolt.Tx, t *taskstore.Task) error {
	if err := tx.Bucket(tasksBucket).Delete([]byte(t.ID)); err != nil {
		return err
	}
	if err := tx.Bucket(ownersBucket).Delete(ownerKey(t.Owner, t.ID)); err != nil {
		return err
	}
	addCount(tx, -1)
	return nil
}

func count(tx *bolt.Tx) int {
	v := tx.Bucket(metaBucket).Get(countKey)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

func addCount(tx *bolt.Tx, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(max(count(tx)+n, 0)))
	tx.Bucket(metaBucket).Put(countKey, b[:])
}

// ownerCount counts an owner's tasks, at most limit of them.
func ownerCount(tx *bolt.Tx, owner string, limit int) int {
	prefix := []byte(owner + "\x00")
	n := 0
	c := tx.Bucket(ownersBucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < limit; k, _ = c.Next() {
		n++
	}
	return n
}

func (s *store) Create(_ context.Context, t *taskstore.Task, lim taskstore.Limits) error {
	data, err := taskstore.Encode(t)
	if err != nil {
		return err
	}
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return taskstore.ErrTooLarge
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		full := func() bool {
			return (lim.Total > 0 && count(tx) >= lim.Total) || (lim.PerOwner > 0 && ownerCount(tx, t.Owner, lim.PerOwner) >= lim.PerOwner)
		}
		if full() {
			if err := s.sweep(tx); err != nil {
				return err
			}
			if full() {
				return taskstore.ErrTooMany
			}
		}
		tasks := tx.Bucket(tasksBucket)
		if tasks.Get([]byte(t.ID)) != nil {
			return taskstore.ErrExists
		}
		if err := tasks.Put([]byte(t.ID), data); err != nil {
			return err
		}
		if err := tx.Bucket(ownersBucket).Put(ownerKey(t.Owner, t.ID), nil); err != nil {
			return err
		}
		addCount(tx, 1)
		return nil
	})
}

func (s *store) Get(_ context.Context, id string) (*taskstore.Task, error) {
	var data []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		data = bytes.Clone(tx.Bucket(tasksBucket).Get([]byte(id)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, taskstore.ErrNotFound
	}
	t, err := taskstore.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("task %s is corrupt: %w", id, err)
	}
	if !s.now().Before(t.Expires()) {
		return nil, taskstore.ErrNotFound // the sweep deletes it
	}
	return t, nil
}

func (s *store) Update(_ context.Context, id string, lim taskstore.Limits, change func(*taskstore.Task) error) (*taskstore.Task, error) {
	var out *taskstore.Task
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(tasksBucket)
		v := b.Get([]byte(id))
		if v == nil {
			return taskstore.ErrNotFound
		}
		t, data, err := taskstore.Apply(id, v, s.now(), lim, change)
		if err != nil {
			return err
		}
		out = t
		return b.Put([]byte(id), data)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *store) Publish(_ context.Context, id string) error {
	s.subs.Tell(id)
	return nil
}

func (s *store) Subscribe(f func(id string)) (stop func()) { return s.subs.Add(f) }

func (s *store) Close() error {
	close(s.stop)
	<-s.done
	return s.db.Close()
}
