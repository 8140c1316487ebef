package runtime

import (
	"context"
	"fmt"
	"time"
)

// ShutdownOptions say how Shutdown drains the runtime.
type ShutdownOptions struct {
	// Grace is how long the calls in flight may take to finish.
	Grace time.Duration
	// StopHandlers, if set, stops the handlers once the grace period is
	// over (toolc serve's is host.StopBecause), which ends the calls still
	// running with an error that gives reason.
	StopHandlers func(reason string)
	// Report, if set, is told as the drain begins and as the grace
	// period ends, for the server's log.
	Report func(ShutdownReport)
}

// ShutdownReport is a step of a Shutdown: its beginning, with the calls
// in flight, or the end of its grace period, with the calls still
// running.
type ShutdownReport struct {
	// GraceOver is false as the drain begins, true once the calls have
	// finished or the grace period is over.
	GraceOver bool
	// Calls are the calls in flight as the drain begins, or still running
	// as the grace period ends.
	Calls int
	Grace time.Duration
}

// String says what the step is, in a line for a log.
func (r ShutdownReport) String() string {
	switch {
	case !r.GraceOver:
		return fmt.Sprintf("shutting down: %s in flight, waiting up to %s for %s", calls(r.Calls), r.Grace, them(r.Calls))
	case r.Calls == 0:
		return "every call in flight finished; stopping the handlers"
	}
	return fmt.Sprintf("%s still running after the grace period of %s; stopping the handlers ends %s", calls(r.Calls), r.Grace, them(r.Calls))
}

// Shutdown drains the runtime without losing a call: it takes no new
// calls (they get ErrDraining), waits up to the grace period for the calls
// in flight, then stops the handlers (StopHandlers), which ends the calls
// still running with a message saying so, and waits up to two seconds for
// those to be answered. A server that shuts down calls it before it closes
// its transport, so that the answers of the drained calls go out.
func (rt *Runtime) Shutdown(opts ShutdownOptions) {
	report := opts.Report
	if report == nil {
		report = func(ShutdownReport) {}
	}
	report(ShutdownReport{Calls: rt.InFlight(), Grace: opts.Grace})
	ctx, cancel := context.WithTimeout(context.Background(), opts.Grace)
	left := rt.Drain(ctx)
	cancel()
	report(ShutdownReport{GraceOver: true, Calls: left, Grace: opts.Grace})
	if opts.StopHandlers != nil {
		opts.StopHandlers(fmt.Sprintf("the server is shutting down, and the call ran past the grace period of %s", opts.Grace))
	}
	// The calls cut off are answered at once; this bounds a handler that
	// is not a plugin and ignores its context.
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	rt.Drain(ctx)
	cancel()
}

// calls is "1 call" or "N calls".
func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}

// them is "it" or "them", for n things.
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
