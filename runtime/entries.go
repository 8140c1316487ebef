package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/caller"
	"github.com/toolc/toolc/plugins"
)

// entryHandlers are the names of the handlers that a service's prompts
// and resources need: those whose contract does not hold their content.
// The service's dispatcher must have each, as it must have each tool.
func entryHandlers(svc *catalog.Service) []string {
	var out []string
	for _, p := range svc.Prompts {
		if p.Messages == nil {
			out = append(out, plugins.PromptPrefix+p.Name)
		}
	}
	for _, r := range svc.Resources {
		if !r.Static() {
			out = append(out, plugins.ResourcePrefix+r.Name)
		}
	}
	return out
}

// ErrNoEntryHandler is the error of CallEntry for a prompt or resource
// whose service has no handler for it.
var ErrNoEntryHandler = errors.New("no handler")

// CallEntry runs the handler of a prompt or a resource of a service,
// named plugins.PromptPrefix or plugins.ResourcePrefix and its name, on
// arguments that the caller has held to the contract: a prompt's
// arguments, or plugins.ResourceCall of a resource's URI and variables.
// Like a tool's call, it is bounded by CallTimeout and MaxResultBytes,
// counted by Drain, and carries the caller; a handler's questions come
// back as the result's InputRequests.
func (rt *Runtime) CallEntry(ctx context.Context, service, handler string, args json.RawMessage, onEvent func(Event)) (*Result, error) {
	d := rt.Snapshot().dispatchers[service]
	if d == nil || !slices.Contains(d.Tools(), handler) {
		return nil, fmt.Errorf("%w for %s in service %q", ErrNoEntryHandler, handler, service)
	}
	if cs := spanFrom(ctx); cs != nil && !cs.claimed {
		// The span of the prompts/get or resources/read this serves.
		cs.entry(service, handler)
	}
	rt.inflight.Add(1)
	defer rt.inflight.Add(-1)
	if rt.draining.Load() {
		return nil, ErrDraining
	}
	if c := caller.From(ctx); c != nil {
		ctx = withCaller(ctx, c)
	}
	ctx, cancel := context.WithTimeout(ctx, rt.opts.CallTimeout)
	defer cancel()
	ctx = plugins.WithResultLimit(ctx, rt.opts.MaxResultBytes)
	res, err := d.Call(ctx, handler, rt.newCallID(), args, onEvent)
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s did not finish within %s and was cancelled", handler, rt.opts.CallTimeout)
	}
	return res, err
}
