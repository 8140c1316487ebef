package plugins

import (
	"context"
	"fmt"
)

type resultLimitKey struct{}

// WithResultLimit returns a context that tells whoever carries the call to
// a handler how large a result the host takes: n bytes, counted as the
// runtime counts a result (the text and data of its content and its
// structured content). A plugin client refuses a larger message as it
// arrives, before reading it, rather than receive it whole and have the
// runtime refuse it then; the runtime sets it on every call to a plugin.
func WithResultLimit(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, resultLimitKey{}, n)
}

// ResultLimit returns the bound that WithResultLimit set, or 0 for none.
func ResultLimit(ctx context.Context) int {
	n, _ := ctx.Value(resultLimitKey{}).(int)
	return n
}

// ResultTooLargeError is a result, or another message of the call, that
// the plugin client refused as it arrived because it was larger than the
// call's ResultLimit allows. Size is the message's size as the plugin
// announced it, 0 when not known.
type ResultTooLargeError struct {
	Size, Limit int
}

func (e *ResultTooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("the handler sent a message of %d bytes, over the limit of %d on its result; it was refused before it was read", e.Size, e.Limit)
	}
	return fmt.Sprintf("the handler sent a message over the limit of %d bytes on its result; it was refused before it was read", e.Limit)
}
