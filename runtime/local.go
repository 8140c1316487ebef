package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/toolc/toolc/plugins"
)

// Dispatcher runs the tools of one service: in-process handlers (Local),
// or a handler plugin (host.Plugin, which toolc serve and dev start).
type Dispatcher interface {
	// Tools lists the tools the dispatcher has handlers for.
	Tools() []string
	// Call runs one tool with arguments that the runtime has validated.
	// An error means the handler could not answer (it crashed, or the
	// context ended); a tool error is a Result with IsError set.
	Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(Event)) (*Result, error)
}

// Local returns a dispatcher for in-process handlers: the same handler
// values a plugin serves with rpc.Serve, for services that embed their
// catalog.
func Local(handlers ...plugins.Handler) Dispatcher {
	l := &local{handlers: map[string]plugins.Handler{}}
	for _, h := range handlers {
		l.handlers[h.Tool()] = h
		l.names = append(l.names, h.Tool())
	}
	slices.Sort(l.names)
	return l
}

type local struct {
	handlers map[string]plugins.Handler
	names    []string
}

var _ Dispatcher = (*local)(nil)

func (l *local) Tools() []string { return l.names }

func (l *local) Call(ctx context.Context, tool, _ string, args json.RawMessage, onEvent func(Event)) (*Result, error) {
	h := l.handlers[tool]
	if h == nil {
		return nil, fmt.Errorf("no handler for %q", tool)
	}
	if onEvent != nil {
		ctx = plugins.WithEvents(ctx, onEvent)
	}
	return callLocal(ctx, h, args)
}

// callLocal runs an in-process handler the way a plugin would: a panic or
// a returned error is a tool error the model reads, not a crash of the
// host, and questions the handler asked are the result's InputRequests.
// Only the context ending is an error to the runtime.
func callLocal(ctx context.Context, h plugins.Handler, args json.RawMessage) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = plugins.Errorf("the handler of %s panicked: %v", h.Tool(), r), nil
		}
	}()
	res, err = h.Call(ctx, args)
	if err != nil && ctx.Err() != nil {
		return res, err
	}
	done := plugins.Finish(ctx, res, err)
	if res == nil && err == nil && len(done.InputRequests) == 0 {
		return nil, nil // the runtime says "returned no result"
	}
	return done, nil
}
