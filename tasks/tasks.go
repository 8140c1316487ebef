// Package tasks runs tool calls as tasks of MCP's Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663), on a runtime and a
// taskstore.Store, for any transport: package mcpserver serves them over
// MCP, package httpapi over /v1.
//
// A Manager starts a call (Start) and waits a moment, its Window: a call
// that finishes, or asks its client something, within it is answered on
// the request, like any call (the Tasks extension lets a server answer a
// fast call directly, and asks it to settle the questions asked before a
// task starts on the request itself, with MRTR). Past the Window the call
// becomes a task: it is stored, the client gets its id, and the handler
// runs on, detached from the request and its connection. Its progress
// (plugins.Progress) becomes the task's status message; a question it
// asks puts the task in input_required until the client answers
// (Update), and the handler then runs again from the top with the
// answers, as every round of a call does (see package plugins); Cancel
// cancels the handler's context. The task's call is bounded by
// Options.Timeout, not by the runtime's CallTimeout.
//
// Every task belongs to the caller that started it (Owner): to anyone
// else, Get, Update and Cancel answer ErrNotFound, exactly as for an id
// that does not exist.
package tasks

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/taskstore"
)

// Defaults of Options.
const (
	DefaultTTL          = time.Hour
	DefaultPollInterval = time.Second
	DefaultTimeout      = time.Hour
	DefaultWindow       = 200 * time.Millisecond
	DefaultMaxPerCaller = 1000
	DefaultMaxTasks     = 100_000
	// DefaultMaxTaskBytes bounds a stored task, its result above all.
	DefaultMaxTaskBytes = 16 << 20
)

// Options configure a Manager.
type Options struct {
	// Store keeps the tasks. Required.
	Store taskstore.Store
	// TTL is how long a task is kept after it is created; its result can
	// be read until then. PollInterval is the polling interval suggested
	// to clients.
	TTL, PollInterval time.Duration
	// Timeout bounds a task's call, in place of the runtime's
	// CallTimeout, which bounds calls a client waits for.
	Timeout time.Duration
	// Window is how long Start waits for a call to finish before it makes
	// it a task.
	Window time.Duration
	// MaxPerCaller caps the tasks one caller has, finished ones included
	// until their TTL ends; MaxTasks caps all of them. A Start past
	// either fails with ErrTooMany. Negative means no cap.
	MaxPerCaller, MaxTasks int
	// MaxTaskBytes caps a stored task; a result that would make it larger
	// is replaced by a tool error that says so. Negative means no cap.
	MaxTaskBytes int
	// Replica names this process among those sharing the store. Default:
	// a random name.
	Replica string
	Logger  *slog.Logger
}

func (o Options) withDefaults() Options {
	o.TTL = cmp.Or(o.TTL, DefaultTTL)
	o.PollInterval = cmp.Or(o.PollInterval, DefaultPollInterval)
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.Window = cmp.Or(o.Window, DefaultWindow)
	o.MaxPerCaller = cmp.Or(o.MaxPerCaller, DefaultMaxPerCaller)
	o.MaxTasks = cmp.Or(o.MaxTasks, DefaultMaxTasks)
	o.MaxTaskBytes = cmp.Or(o.MaxTaskBytes, DefaultMaxTaskBytes)
	o.Replica = cmp.Or(o.Replica, taskstore.NewID())
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Errors of a Manager.
var (
	// ErrNotFound: no task of the caller has the id (see taskstore).
	ErrNotFound = taskstore.ErrNotFound
	// ErrTooMany: the caller, or the server, has as many tasks as it may.
	ErrTooMany = errors.New("too many tasks")
)

// Manager runs calls as tasks.
type Manager struct {
	rt    *runtime.Runtime
	opts  Options
	lim   taskstore.Limits
	now   func() time.Time
	unsub func()

	mu      sync.Mutex
	running map[string]*run
	closed  bool
	// stopLease stops the renewal of this replica's lease, with a store
	// shared by replicas (taskstore.Leases).
	stopLease func()
}

// New returns a Manager of calls on rt. Close it when done.
func New(rt *runtime.Runtime, opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{rt: rt, opts: opts, now: time.Now, running: map[string]*run{},
		lim: taskstore.Limits{PerOwner: max(opts.MaxPerCaller, 0), Total: max(opts.MaxTasks, 0), MaxBytes: max(opts.MaxTaskBytes, 0)}}
	m.unsub = opts.Store.Subscribe(m.wake)
	m.stopLease = func() {}
	if l, ok := opts.Store.(taskstore.Leases); ok {
		m.stopLease = m.renewLease(l)
	}
	return m
}

// leaseTTL is how long a replica's lease lasts unrenewed: a replica dead
// this long has its tasks failed (see Get). It is renewed every third of
// it.
const leaseTTL = 15 * time.Second

func (m *Manager) renewLease(l taskstore.Leases) func() {
	ctx, cancel := context.WithCancel(context.Background())
	renew := func() {
		if err := l.Renew(ctx, m.opts.Replica, leaseTTL); err != nil && ctx.Err() == nil {
			m.opts.Logger.Error("renewing this replica's lease in the task store", "error", err)
		}
	}
	renew()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(leaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				renew()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// runnerDied is the error of a task whose replica died.
const runnerDied = "the replica running the task stopped before the task finished"

// Options returns the Manager's options, with their defaults.
func (m *Manager) Options() Options { return m.opts }

// Owner is the owner of the tasks that a caller starts: a digest of its
// OAuth subject and client id, or "" for a server without OAuth, whose
// callers are one.
func Owner(subject, clientID string) string {
	if subject == "" && clientID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(subject + "\x00" + clientID))
	return hex.EncodeToString(sum[:])
}

// Call is a call to start.
type Call struct {
	Owner string
	// Tool is the tool's name as the client called it.
	Tool string
	Args json.RawMessage
	// Input is what the handler's asks are answered from, in the call's
	// first run.
	Input *plugins.Input
	// OnEvent receives the handler's events until the call becomes a
	// task; nil drops them.
	OnEvent func(runtime.Event)
	// Always makes the call a task at once, without the Window: for a
	// caller that asked for a task (httpapi's POST /v1/tasks).
	Always bool
}

// Start runs a call. If it ends within the Window, Start returns its
// result, as runtime.CallWithEvents does (questions for the client
// included); otherwise the call goes on as a task, and Start returns the
// task as stored. ctx is the request's: its values reach the handler,
// but its end cancels the call only within the Window.
func (m *Manager) Start(ctx context.Context, c Call) (*runtime.Result, *taskstore.Task, error) {
	r := &run{m: m, id: taskstore.NewID(), call: c, wakeup: make(chan struct{}, 1)}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.events.forward = c.OnEvent
	first := r.launch(c.Input)
	if !c.Always {
		timer := time.NewTimer(m.opts.Window)
		defer timer.Stop()
		select {
		case o := <-first:
			r.cancel()
			return o.res, nil, o.err
		case <-ctx.Done():
			r.cancel()
			return nil, nil, ctx.Err()
		case <-timer.C:
		}
	}
	now := m.now().UTC()
	t := &taskstore.Task{ID: r.id, Owner: c.Owner, Tool: c.Tool, Status: taskstore.Working,
		CreatedAt: now, UpdatedAt: now, TTL: m.opts.TTL, PollInterval: m.opts.PollInterval, Runner: m.opts.Replica}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		r.cancel()
		return nil, nil, runtime.ErrDraining
	}
	m.running[r.id] = r
	m.mu.Unlock()
	if err := m.opts.Store.Create(context.WithoutCancel(ctx), t, m.lim); err != nil {
		m.forget(r)
		r.cancel()
		if errors.Is(err, taskstore.ErrTooMany) {
			return nil, nil, fmt.Errorf("%w: the caller may have %d and the server %d, finished ones included until their TTL (%s) ends", ErrTooMany, m.opts.MaxPerCaller, m.opts.MaxTasks, m.opts.TTL)
		}
		return nil, nil, fmt.Errorf("storing the task: %w", err)
	}
	r.events.become(r)
	go r.drive(first)
	return nil, t, nil
}

// Get returns the owner's task with the id.
func (m *Manager) Get(ctx context.Context, owner, id string) (*taskstore.Task, error) {
	t, err := m.opts.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Owner != owner {
		return nil, ErrNotFound
	}
	if l, ok := m.opts.Store.(taskstore.Leases); ok && !t.Status.Terminal() && t.Runner != m.opts.Replica {
		// Its handler runs on another replica: if that one died, so did
		// the handler, and the task can never finish.
		if alive, err := l.Alive(ctx, t.Runner); err == nil && !alive {
			failed, err := m.opts.Store.Update(ctx, id, m.lim, func(t *taskstore.Task) error {
				if !t.Status.Terminal() {
					t.Status, t.Questions = taskstore.Failed, nil
					t.Error = &taskstore.Error{Code: codeInternal, Message: runnerDied}
					t.StatusMessage, t.UpdatedAt = runnerDied, m.now().UTC()
				}
				return nil
			})
			if err == nil {
				// Said to every listener, wherever it is: this Get is
				// the only place the task's end is noticed.
				m.opts.Store.Publish(ctx, id)
				return failed, nil
			}
		}
	}
	return t, nil
}

// Subscribe calls f with the id of each task that changes, on this
// replica or any other sharing the store, until stop is called: a change
// of status, status message, questions or result, or its end. f must not
// block. A task whose replica died is seen to fail only by a Get (see
// above), so a follower also polls.
func (m *Manager) Subscribe(f func(id string)) (stop func()) {
	return m.opts.Store.Subscribe(f)
}

// Answer is a function that turns the client's response to a question
// into the handler's Answer, or reports that the response does not
// answer it (of another kind, or not fitting its form).
type Answer func(q plugins.InputRequest) (plugins.Answer, bool)

// Update hands the client's answers to the owner's task: each question
// the task waits on that answer answers is answered once; responses to
// anything else are ignored, as the extension asks. When no question is
// left, the handler runs again with the answers.
func (m *Manager) Update(ctx context.Context, owner, id string, answer Answer) error {
	changed := false
	_, err := m.opts.Store.Update(ctx, id, m.lim, func(t *taskstore.Task) error {
		changed = false
		if t.Owner != owner {
			return ErrNotFound
		}
		if t.Status != taskstore.InputRequired {
			return nil
		}
		var left []plugins.InputRequest
		for _, q := range t.Questions {
			if a, ok := answer(q); ok {
				t.Answers = append(t.Answers, a)
				changed = true
				continue
			}
			left = append(left, q)
		}
		if !changed {
			return nil
		}
		t.Questions = left
		if len(left) == 0 {
			t.Status = taskstore.Working
		}
		t.UpdatedAt = m.now().UTC()
		return nil
	})
	if err != nil || !changed {
		return err
	}
	return m.opts.Store.Publish(ctx, id)
}

// Cancel cancels the owner's task: a task that has not finished is
// cancelled, and its handler's context with it, wherever it runs; one that
// has finished stays as it is.
func (m *Manager) Cancel(ctx context.Context, owner, id string) error {
	changed := false
	_, err := m.opts.Store.Update(ctx, id, m.lim, func(t *taskstore.Task) error {
		changed = false
		if t.Owner != owner {
			return ErrNotFound
		}
		if t.Status.Terminal() {
			return nil
		}
		t.Status, t.StatusMessage, t.Questions = taskstore.Cancelled, "cancelled by the client", nil
		t.UpdatedAt = m.now().UTC()
		changed = true
		return nil
	})
	if err != nil || !changed {
		return err
	}
	return m.opts.Store.Publish(ctx, id)
}

// Close stops the Manager: the tasks it runs are cancelled and marked
// failed, saying that the server shut down.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	runs := make([]*run, 0, len(m.running))
	for _, r := range m.running {
		runs = append(runs, r)
	}
	m.mu.Unlock()
	m.unsub()
	m.stopLease()
	for _, r := range runs {
		r.cancel()
		r.finish(func(t *taskstore.Task) {
			t.Status, t.Error = taskstore.Failed, &taskstore.Error{Code: codeInternal, Message: shutDown}
			t.StatusMessage = t.Error.Message
		})
	}
}

// wake is the store's subscription: a task changed somewhere.
func (m *Manager) wake(id string) {
	m.mu.Lock()
	r := m.running[id]
	m.mu.Unlock()
	if r != nil {
		select {
		case r.wakeup <- struct{}{}:
		default:
		}
	}
}

func (m *Manager) forget(r *run) {
	m.mu.Lock()
	delete(m.running, r.id)
	m.mu.Unlock()
}

// JSON-RPC error codes of failed tasks.
const (
	codeInvalidParams     = -32602
	codeInternal          = -32603
	codeMissingCapability = -32021
)

// run is one task's call, in this process.
type run struct {
	m      *Manager
	id     string
	call   Call
	ctx    context.Context
	cancel context.CancelFunc
	wakeup chan struct{}
	events events
}

type outcome struct {
	res *runtime.Result
	err error
}

// launch runs the handler once with in, and sends the outcome.
func (r *run) launch(in *plugins.Input) <-chan outcome {
	ch := make(chan outcome, 1)
	ctx := runtime.WithCallTimeout(plugins.WithInput(r.ctx, in), r.m.opts.Timeout)
	go func() {
		res, err := r.m.rt.CallWithEvents(ctx, r.call.Tool, r.call.Args, r.events.on)
		ch <- outcome{res, err}
	}()
	return ch
}

// drive follows the task from its first run to its end.
func (r *run) drive(results <-chan outcome) {
	defer r.m.forget(r)
	defer r.cancel()
	in := r.call.Input
	for {
		select {
		case o := <-results:
			if r.ctx.Err() != nil {
				return // cancelled: Cancel or Close wrote the status
			}
			if o.err == nil && len(o.res.InputRequests) > 0 && o.res.MissingCapability == "" {
				results = nil
				r.ask(o.res.InputRequests)
				continue
			}
			r.end(o)
			return
		case <-r.wakeup:
			t, err := r.m.opts.Store.Get(r.ctx, r.id)
			switch {
			case err != nil || t.Status == taskstore.Cancelled:
				r.cancel() // expired, or cancelled from any replica
				return
			case results == nil && t.Status == taskstore.Working:
				next := *in
				next.Answers = t.Answers
				in = &next
				results = r.launch(in)
			}
		}
	}
}

// ask puts the task in input_required with the handler's questions.
func (r *run) ask(questions []plugins.InputRequest) {
	r.update(func(t *taskstore.Task) {
		if t.Status.Terminal() {
			return
		}
		t.Status, t.Questions = taskstore.InputRequired, questions
	})
}

// end stores the call's outcome.
func (r *run) end(o outcome) {
	// A call that ends in error while the server drains was, most likely,
	// cut short by the shutdown: the task did not finish.
	stopped := r.m.rt.Draining() && (o.err != nil || o.res.IsError)
	r.finish(func(t *taskstore.Task) {
		switch {
		case stopped:
			msg := shutDown
			if o.err == nil && len(o.res.Content) > 0 {
				msg += ": " + o.res.Content[0].Text
			}
			t.Status, t.Error = taskstore.Failed, &taskstore.Error{Code: codeInternal, Message: msg}
			t.StatusMessage = msg
		case o.err != nil:
			code := codeInternal
			if errors.Is(o.err, runtime.ErrUnknownTool) {
				code = codeInvalidParams
			}
			t.Status, t.Error = taskstore.Failed, &taskstore.Error{Code: code, Message: o.err.Error()}
			t.StatusMessage = t.Error.Message
		case o.res.MissingCapability != "":
			data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{o.res.MissingCapability: map[string]any{}}})
			t.Status = taskstore.Failed
			t.Error = &taskstore.Error{Code: codeMissingCapability,
				Message: fmt.Sprintf("the tool needs the client's %s capability, which the client did not declare", o.res.MissingCapability), Data: data}
			t.StatusMessage = t.Error.Message
		default:
			b, err := json.Marshal(o.res)
			if err != nil {
				b, _ = json.Marshal(plugins.Errorf("the result of %s could not be stored: %v", r.call.Tool, err))
			}
			t.Status, t.Result = taskstore.Completed, b
		}
	})
}

// finish ends the task with change, unless it has ended already; a result
// too large to store ends it with a tool error that says so.
func (r *run) finish(change func(*taskstore.Task)) {
	_, err := r.update(change)
	if errors.Is(err, taskstore.ErrTooLarge) {
		r.update(func(t *taskstore.Task) {
			if t.Status.Terminal() {
				return
			}
			b, _ := json.Marshal(plugins.Errorf("the result of %s is larger than a task may keep (%d bytes)", r.call.Tool, r.m.opts.MaxTaskBytes))
			t.Status, t.Result = taskstore.Completed, b
		})
	}
}

// update changes the stored task, unless it has ended, and tells the
// subscribers.
func (r *run) update(change func(*taskstore.Task)) (*taskstore.Task, error) {
	ctx := context.WithoutCancel(r.ctx)
	t, err := r.m.opts.Store.Update(ctx, r.id, r.m.lim, func(t *taskstore.Task) error {
		if t.Status.Terminal() {
			return errEnded
		}
		change(t)
		t.UpdatedAt = r.m.now().UTC()
		return nil
	})
	switch {
	case errors.Is(err, errEnded), errors.Is(err, taskstore.ErrNotFound):
		return nil, nil
	case err != nil:
		if !errors.Is(err, taskstore.ErrTooLarge) {
			r.m.opts.Logger.Error("storing a task", "task", r.id, "tool", r.call.Tool, "error", err)
		}
		return nil, err
	}
	r.m.opts.Store.Publish(ctx, r.id)
	return t, nil
}

var errEnded = errors.New("the task has ended")

// shutDown is the error of a task whose server shut down before it
// finished.
const shutDown = "the server running the task shut down before it finished"

// events routes a call's events: to the request while it waits, then,
// once the call is a task, its progress to the task's status message.
type events struct {
	mu      sync.Mutex
	forward func(runtime.Event)
	task    *run
	last    time.Time
}

func (e *events) become(r *run) {
	e.mu.Lock()
	e.forward, e.task = nil, r
	e.mu.Unlock()
}

// statusEvery bounds how often progress rewrites a task's status message.
const statusEvery = 100 * time.Millisecond

func (e *events) on(ev runtime.Event) {
	e.mu.Lock()
	forward, task := e.forward, e.task
	write := false
	if task != nil && ev.Progress != nil && ev.Progress.Message != "" {
		if now := time.Now(); now.Sub(e.last) >= statusEvery {
			e.last, write = now, true
		}
	}
	e.mu.Unlock()
	if forward != nil {
		forward(ev)
	}
	if write {
		msg := ev.Progress.Message
		task.update(func(t *taskstore.Task) { t.StatusMessage = msg })
	}
}
