// Package cutshort marks the errors that a context's end caused, so that
// the code that ended the context can tell them from real failures
// without their messages changing: a go build killed because toolc is
// stopping fails with "signal: killed", which says nothing of the
// context, and serve.Run must not report it, while it must report a
// contract that does not compile even when the failure lands after a
// signal.
package cutshort

import (
	"context"
	"errors"
)

// Mark returns err as an error that also wraps ctx.Err() when ctx has
// ended, with err's message unchanged; otherwise err itself. Call it
// where ctx's end is what made an operation fail (a process that
// exec.CommandContext killed, a start that ctx abandoned).
func Mark(ctx context.Context, err error) error {
	cause := ctx.Err()
	if err == nil || cause == nil || errors.Is(err, cause) {
		return err
	}
	return &marked{err: err, cause: cause}
}

// By reports whether err was caused by the end of ctx: ctx has ended and
// err wraps its error (context.Canceled or context.DeadlineExceeded).
func By(ctx context.Context, err error) bool {
	cause := ctx.Err()
	return err != nil && cause != nil && errors.Is(err, cause)
}

type marked struct{ err, cause error }

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.cause} }
