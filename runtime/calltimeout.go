package runtime

import (
	"context"
	"time"
)

type callTimeoutKey struct{}

// WithCallTimeout returns a context under which a call is bounded by d in
// place of Options.CallTimeout: a task's call (package tasks) has a
// timeout of its own, not that of a call a client waits for. A call that
// runs over it ends with the same tool error as one over CallTimeout.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// callTimeout is the bound of a call under ctx.
func (rt *Runtime) callTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return rt.opts.CallTimeout
}
