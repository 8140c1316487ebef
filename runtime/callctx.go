package runtime

import (
	"context"
	"sync"
	"time"
)

// callContext is the context of one call: its parent's, with the
// runtime's CallTimeout as a deadline. Unlike context.WithTimeout, it arms
// no timer until someone waits on it (Done, or a context derived from it).
// Most in-process handlers never do, and a timer set and stopped on every
// call was the largest part of the runtime's own cost of such a call. Err
// is right without the timer: it reads the clock.
//
// The runtime uses it for in-process handlers only: a plugin call would
// arm it at once, since gRPC waits on Done to carry the deadline across,
// and then context.WithTimeout costs less.
//
// As with any Context that is not the context package's own,
// context.Cause of it reports its parent's cause, not the deadline; Err
// and the contexts derived from it are exact.
type callContext struct {
	parent   context.Context
	deadline time.Time

	mu sync.Mutex
	// done is made by the first Done; closed when the call is cancelled.
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

// withCallTimeout returns the call's context and the function that ends
// it, which the caller must call when the call returns, as with
// context.WithTimeout.
func withCallTimeout(parent context.Context, timeout time.Duration) (*callContext, context.CancelFunc) {
	c := &callContext{parent: parent, deadline: time.Now().Add(timeout)}
	return c, c.release
}

func (c *callContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *callContext) Value(key any) any { return c.parent.Value(key) }

func (c *callContext) Err() error {
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

func (c *callContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked()
	return c.done
}

// armLocked makes the done channel, and has the deadline and the parent
// close it.
func (c *callContext) armLocked() {
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

func (c *callContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelLocked(err)
}

func (c *callContext) cancelLocked(err error) {
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

// release ends the call, as the cancel function of context.WithTimeout
// does. It keeps an error that came first: the deadline that passed, for
// instance, even if nobody armed the timer.
func (c *callContext) release() {
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
func (c *callContext) AfterFunc(f func()) (stop func() bool) {
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
func (c *callContext) String() string {
	return "runtime.callContext(deadline " + c.deadline.String() + ")"
}
