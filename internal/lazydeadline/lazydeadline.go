// Package lazydeadline gives a context a deadline without arming a timer
// for it until someone waits on the context. WithDeadline is the whole API.
//
// Most handlers never wait on their context (Done, or a context derived
// from it): for them, a timer set and stopped on every call, as
// context.WithDeadline does, is pure cost. It was the largest part of the
// runtime's own cost of an in-process call, and on the plugin side it is
// a timer that gRPC would arm for every call's deadline. Err is right
// without the timer: it reads the clock.
//
// As with any Context that is not the context package's own,
// context.Cause of it reports its parent's cause, not the deadline; Err
// and the contexts derived from it are exact.
package lazydeadline

import (
	"context"
	"sync"
	"time"
)

// WithDeadline returns parent with the deadline d, and the function that
// ends it, which the caller must call when done, as with
// context.WithDeadline. When the deadline passes, Err is
// context.DeadlineExceeded; Deadline reports the earlier of d and the
// parent's own.
func WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	c := &lazyContext{parent: parent, deadline: d}
	return c, c.release
}

// lazyContext is the context WithDeadline returns.
type lazyContext struct {
	parent   context.Context
	deadline time.Time

	mu sync.Mutex
	// done is made by the first Done; closed when the context ends.
	done chan struct{}
	// err is set once the context is cancelled: by the deadline, by the
	// parent, or by release.
	err error
	// stopTimer and stopParent disarm what Done armed.
	stopTimer, stopParent func() bool
	// afterFuncs run, each in its own goroutine, on cancellation.
	afterFuncs map[*afterFunc]struct{}
}

type afterFunc struct{ f func() }

func (c *lazyContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *lazyContext) Value(key any) any { return c.parent.Value(key) }

func (c *lazyContext) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *lazyContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked()
	return c.done
}

// armLocked makes the done channel, and has the deadline and the parent
// close it.
func (c *lazyContext) armLocked() {
	if c.done != nil {
		return
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return
	}
	if err := c.parent.Err(); err != nil {
		c.cancelLocked(err)
		return
	}
	wait := time.Until(c.deadline)
	if wait <= 0 {
		c.cancelLocked(context.DeadlineExceeded)
		return
	}
	c.stopTimer = time.AfterFunc(wait, func() { c.cancel(context.DeadlineExceeded) }).Stop
	if c.parent.Done() != nil {
		c.stopParent = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err()) })
	}
}

func (c *lazyContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelLocked(err)
}

func (c *lazyContext) cancelLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.stopTimer != nil {
		c.stopTimer()
	}
	if c.stopParent != nil {
		c.stopParent()
	}
	for a := range c.afterFuncs {
		go a.f()
	}
	c.afterFuncs = nil
}

// release ends the context, as the cancel function of
// context.WithDeadline does. It keeps an error that came first: the deadline that passed, for
// instance, even if nobody armed the timer.
func (c *lazyContext) release() {
	err := context.Canceled
	if !time.Now().Before(c.deadline) {
		err = context.DeadlineExceeded
	}
	if perr := c.parent.Err(); perr != nil {
		err = perr
	}
	c.cancel(err)
}

// AfterFunc lets the context package propagate cancellation to contexts
// derived from this one (context.WithCancel and the like, and
// context.AfterFunc) without a goroutine each.
func (c *lazyContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	if c.afterFuncs == nil {
		c.afterFuncs = map[*afterFunc]struct{}{}
	}
	c.afterFuncs[a] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.afterFuncs[a]; !ok {
			return false
		}
		delete(c.afterFuncs, a)
		return true
	}
}

// String is what fmt prints for the context, as for the context package's
// own.
func (c *lazyContext) String() string {
	return "lazydeadline.WithDeadline(deadline " + c.deadline.String() + ")"
}
