// Package taskstore keeps the tasks of MCP's Tasks extension
// (io.modelcontextprotocol/tasks): a Store holds each Task, its status,
// its questions for the client and the client's answers, and its result,
// until its TTL ends. Package tasks runs them; this package only keeps
// them, behind one interface with three implementations:
//
//   - NewMemory: in this process, for tests and toolc dev;
//   - boltstore: on local disk, across restarts (toolc serve's default);
//   - redisstore: in Redis, shared by replicas behind a load balancer.
//
// A Store is safe for concurrent use. Its Update is atomic: a read, a
// change and a write that no other Update on the same task interleaves,
// in this process or any other sharing the store.
package taskstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolc/toolc/plugins"
)

// Status is a task's status, as MCP names it.
type Status string

// The statuses of a task. The last three are terminal: a task in one of
// them never changes again.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether a task in status s is finished.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Task is one task, as a Store keeps it.
type Task struct {
	// ID is the task's id (NewID): unguessable, so that it can be
	// handed to the client that created the task and to nobody else.
	ID string `json:"id"`
	// Owner is the caller that created the task (see tasks.Owner); only
	// it may see or change the task. "" is the one caller of a server
	// without OAuth.
	Owner string `json:"owner"`
	// Tool is the tool called, by the name the client called it.
	Tool          string    `json:"tool"`
	Status        Status    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	// TTL is how long the task is kept, from CreatedAt: after it, the
	// Store answers ErrNotFound for it, and forgets it.
	TTL time.Duration `json:"ttl"`
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration `json:"pollInterval"`
	// Result is the handler's result, as JSON of a plugins.Result, when
	// Status is Completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the protocol error the call ended with, when Status is
	// Failed.
	Error *Error `json:"error,omitempty"`
	// Questions are the handler's questions that wait for the client's
	// answer, when Status is InputRequired.
	Questions []plugins.InputRequest `json:"questions,omitempty"`
	// Answers are the client's answers so far, handed to every later run
	// of the handler (see plugins.Input).
	Answers []plugins.Answer `json:"answers,omitempty"`
	// Runner names the process that runs the task's handler (tasks
	// Options.Replica), so that a process that restarts can tell which
	// tasks died with it.
	Runner string `json:"runner,omitempty"`
}

// Error is a JSON-RPC error, as a failed task carries it.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Expires is when the task's TTL ends.
func (t *Task) Expires() time.Time { return t.CreatedAt.Add(t.TTL) }

// Limits bound what one Create may add to a store.
type Limits struct {
	// PerOwner caps the tasks one owner has in the store, finished ones
	// included until their TTL ends; Total caps all of them. 0 means no
	// cap.
	PerOwner, Total int
	// MaxBytes caps the size of a task as the store keeps it (its result
	// above all): an Update that makes it larger fails with ErrTooLarge.
	// 0 means no cap.
	MaxBytes int
}

// Errors of a Store.
var (
	// ErrNotFound: no task has the id, or its TTL has ended.
	ErrNotFound = errors.New("task not found")
	// ErrTooMany: a Create over Limits.PerOwner or Limits.Total.
	ErrTooMany = errors.New("too many tasks")
	// ErrTooLarge: an Update that would make a task larger than
	// Limits.MaxBytes.
	ErrTooLarge = errors.New("task too large")
	// ErrExists: a Create of an id the store has.
	ErrExists = errors.New("task id in use")
)

// Store keeps tasks.
type Store interface {
	// Create adds a new task, within lim; the task is found by Get as
	// soon as Create returns, from any process sharing the store.
	Create(ctx context.Context, t *Task, lim Limits) error
	// Get returns the task with the id.
	Get(ctx context.Context, id string) (*Task, error)
	// Update changes the task with the id atomically: it calls change
	// with the task as stored, and stores what change leaves, unless
	// change returns an error, which Update returns. It returns the
	// task as stored afterwards. change may run more than once (an
	// optimistic store retries it after a conflicting write), so it must
	// depend only on the task it is given.
	Update(ctx context.Context, id string, lim Limits, change func(*Task) error) (*Task, error)
	// Publish tells every subscriber, in every process sharing the
	// store, that the task with the id changed.
	Publish(ctx context.Context, id string) error
	// Subscribe calls f with the id of each task published, until stop
	// is called. f must not block.
	Subscribe(f func(id string)) (stop func())
	// Close releases the store.
	Close() error
}

// NewID returns a new task id: 128 bits from crypto/rand, in base64url,
// which nobody can guess or enumerate.
func NewID() string {
	return base64.RawURLEncoding.EncodeToString(randomBytes(16))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand's documented guarantee)
	return b
}

// Encode is the form every store keeps a task in, and the size Limits
// counts.
func Encode(t *Task) ([]byte, error) { return json.Marshal(t) }

// Apply is the step of an Update that every Store shares, between its
// read and its write: it decodes the stored task, refuses one expired at
// now as ErrNotFound, calls change, and encodes the result within lim. It
// returns the changed task and what to store.
func Apply(id string, stored []byte, now time.Time, lim Limits, change func(*Task) error) (*Task, []byte, error) {
	t, err := Decode(stored)
	if err != nil {
		return nil, nil, fmt.Errorf("task %s is corrupt: %w", id, err)
	}
	if !now.Before(t.Expires()) {
		return nil, nil, ErrNotFound
	}
	if err := change(t); err != nil {
		return nil, nil, err
	}
	data, err := Encode(t)
	if err != nil {
		return nil, nil, err
	}
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return nil, nil, ErrTooLarge
	}
	return t, data, nil
}

// Decode reads what Encode wrote.
func Decode(b []byte) (*Task, error) {
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Leases is what a Store shared by several processes adds: each process
// renews a lease of its own while it lives, so that the others can tell
// that a task's Runner died with its handler.
type Leases interface {
	// Renew holds replica's lease for ttl.
	Renew(ctx context.Context, replica string, ttl time.Duration) error
	// Alive reports whether replica's lease holds.
	Alive(ctx context.Context, replica string) (bool, error)
}
