// Package supervise keeps one run of a handler going for the calls that
// need it: a handler plugin's process (host.Plugin), an upstream MCP
// server's session (upstream.Server). A Supervisor hands the current run
// to each call, counted in flight; it restarts a run that ended, with
// exponential backoff, once for all the callers that find it ended; and
// Stop waits, within a grace period, for the calls in flight before the
// caller ends the last run.
//
//	sup := supervise.New(first, supervise.Config[*proc]{Start: restart, Kill: (*proc).Kill, ...})
//	p, err := sup.Acquire(ctx) // the current run, restarted first if it ended
//	defer sup.Release()
//
// What a run is, how to start and end one, and what to say about it stay
// with the caller: the Supervisor only decides when.
package supervise

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolc/toolc/internal/graceful"
)

// Backoff bounds: the wait before a restart doubles with each failure
// in a row (a crash, or a start that failed), from MinDelay up to
// MaxDelay.
const (
	MinDelay = 100 * time.Millisecond
	MaxDelay = 10 * time.Second
)

// Run is one run of what is supervised; its zero value (nil) is no run.
type Run interface {
	comparable
	// Ended reports whether the run is over: its process exited, or its
	// connection was lost.
	Ended() bool
}

// Config says how to restart a run, and how to end one.
type Config[R Run] struct {
	// Start starts a new run, for a restart. It does not depend on any
	// caller's context: a caller that gives up does not abandon it.
	Start func() (R, error)
	// Kill ends a run that ended, or that a restart started after Stop.
	Kill func(R)
	// Lost, if set, is told of a run found ended, before Kill (a log line).
	Lost func(R)
	// Restarted, if set, is told of each restart once it is over: the new
	// run, or why there is none.
	Restarted func(R, error)
	// Stopped is the error of a call once Stop has run.
	Stopped error
	// Waiting makes the error of a caller whose ctx ended while it waited
	// for a restart from ctx's error.
	Waiting func(ctxErr error) error
}

// Supervisor keeps a run going (see the package comment).
type Supervisor[R Run] struct {
	cfg Config[R]

	mu  sync.Mutex
	cur R
	// failures counts the failed starts and crashes since a run last
	// answered. It is atomic because every call reads it (Answered),
	// without mu.
	failures  atomic.Int64
	nextStart time.Time
	// restarting is closed when the restart under way ends; nil when none
	// is. restartErr says why the last one failed.
	restarting chan struct{}
	restartErr error
	closed     bool
	done       chan struct{}

	inflight sync.WaitGroup
	// busy counts the same calls as inflight, for Stop to tell at once
	// whether any is running, which a WaitGroup cannot say.
	busy atomic.Int64
}

// New supervises first, a run that has started.
func New[R Run](first R, cfg Config[R]) *Supervisor[R] {
	return &Supervisor[R]{cfg: cfg, cur: first, done: make(chan struct{})}
}

// Acquire returns a run that has not ended, counted in flight until
// Release. When the run has ended, it starts a restart, or joins the one
// under way, and waits for it as long as ctx allows; a caller that waited
// for a restart that failed gets its error, and the next caller tries
// again once the backoff has passed.
func (s *Supervisor[R]) Acquire(ctx context.Context) (R, error) {
	var zero R
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return zero, s.cfg.Stopped
		}
		if s.cur != zero && !s.cur.Ended() {
			s.inflight.Add(1)
			s.busy.Add(1)
			r := s.cur
			s.mu.Unlock()
			return r, nil
		}
		if s.cur != zero {
			s.recordLoss()
		}
		wait := s.beginRestart()
		s.mu.Unlock()

		select {
		case <-wait:
		case <-ctx.Done():
			return zero, s.cfg.Waiting(ctx.Err())
		}
		s.mu.Lock()
		up := s.cur != zero && !s.cur.Ended()
		err := s.restartErr
		s.mu.Unlock()
		if !up && err != nil {
			return zero, err
		}
	}
}

// Release ends the count of a call that Acquire started.
func (s *Supervisor[R]) Release() {
	s.busy.Add(-1)
	s.inflight.Done()
}

// Current returns the current run, the zero R when there is none (between
// a crash and its restart).
func (s *Supervisor[R]) Current() R {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Answered records that a run answered a call: the next crash starts a
// fresh backoff.
func (s *Supervisor[R]) Answered() {
	if s.failures.Load() > 0 {
		s.failures.Store(0)
	}
}

// Lost records that r ended (it died under a call, or failed a health
// check), unless it was replaced already, and starts its restart. It
// reports whether a restart is under way: not once Stop has run.
func (s *Supervisor[R]) Lost(r R) bool {
	var zero R
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.cur == r && r != zero {
		s.recordLoss()
	}
	if s.cur == zero {
		s.beginRestart()
	}
	return true
}

// Done is closed once Stop has run: health checks end with it.
func (s *Supervisor[R]) Done() <-chan struct{} { return s.done }

// Stop ends the supervision: no call acquires a run any more, and no
// restart begins. It waits for the calls in flight, for at most grace,
// and returns the last run, for the caller to end, and whether calls
// were still running when grace was over (overdue), which the caller
// then tells them. With no run, it does not wait. Stop may be called
// more than once.
func (s *Supervisor[R]) Stop(grace time.Duration) (last R, overdue bool) {
	var zero R
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	last = s.cur
	// With closed set, no call starts any more (Acquire checks it under
	// mu): none running now means none to wait for, whatever the grace;
	// graceful.Wait, given a zero grace, would report them overdue.
	idle := s.busy.Load() == 0
	s.mu.Unlock()
	if last == zero || idle {
		return last, false
	}
	return last, !graceful.Wait(&s.inflight, grace)
}

// recordLoss drops the current run, which ended. s.mu is held.
func (s *Supervisor[R]) recordLoss() {
	var zero R
	if s.cfg.Lost != nil {
		s.cfg.Lost(s.cur)
	}
	s.cfg.Kill(s.cur)
	s.cur = zero
	s.failures.Add(1)
	s.nextStart = time.Now().Add(s.delay())
}

// beginRestart starts a restart, unless one is under way, and returns the
// channel that closes when it ends. s.mu is held.
func (s *Supervisor[R]) beginRestart() chan struct{} {
	if s.restarting == nil {
		s.restarting = make(chan struct{})
		go s.restart(s.restarting, time.Until(s.nextStart))
	}
	return s.restarting
}

// restart starts a run after delay, or at once when Stop runs meanwhile
// (the run is then ended again), and closes done when it is over.
func (s *Supervisor[R]) restart(done chan struct{}, delay time.Duration) {
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
		}
	}
	r, err := s.cfg.Start()
	s.mu.Lock()
	s.restarting = nil
	s.restartErr = err
	kept := false
	switch {
	case err != nil:
		s.failures.Add(1)
		s.nextStart = time.Now().Add(s.delay())
	case s.closed:
		// Stop ran during the start: nobody will end this run later.
		s.cfg.Kill(r)
		s.restartErr = s.cfg.Stopped
	default:
		s.cur, kept = r, true
	}
	s.mu.Unlock()
	close(done)
	if s.cfg.Restarted != nil && (kept || err != nil) {
		s.cfg.Restarted(r, err)
	}
}

// delay is the wait before the next start: MinDelay after one failure,
// doubling with each one more, up to MaxDelay.
func (s *Supervisor[R]) delay() time.Duration {
	return backoff(s.failures.Load())
}

func backoff(failures int64) time.Duration {
	return min(MinDelay<<min(max(failures-1, 0), 10), MaxDelay)
}
