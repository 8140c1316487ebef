// Package runtime serves compiled tools: it holds an immutable snapshot of
// a catalog and the handlers behind it, validates every call's arguments
// against the contract before a handler runs, and dispatches the call to a
// handler plugin or an in-process handler.
//
//	rt := runtime.New(runtime.Options{})
//	err := rt.Swap(cat, map[string]runtime.Dispatcher{"weather-service": runtime.Local(handlers...)})
//	res, err := rt.Call(ctx, "query_weather", []byte(`{"city":"Berlin"}`))
//
// A reload builds a new snapshot and swaps it in atomically; calls already
// running finish on the snapshot they started with.
//
// This package is the core that every way of calling a tool shares: the
// snapshot, the call slots, the drain, the scope policy for OAuth callers,
// and the call's span. The transports are packages of their own, which
// serve whatever snapshot is current: mcpserver (MCP, over stdio and
// Streamable HTTP) and httpapi (the HTTP server: the function-call API,
// health, metrics, and the guards in front of MCP), which package serve
// starts and drains for toolc serve, toolc dev and embedders alike. A
// service that calls its tools in process links none of them: no MCP SDK,
// no Prometheus, no JOSE.
package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/caller"
	"github.com/toolc/toolc/internal/lazydeadline"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/validate"
)

// DefaultCallTimeout is the default of Options.CallTimeout.
const DefaultCallTimeout = 30 * time.Second

// Options bound what a call may cost. Zero values take the defaults.
type Options struct {
	// CallTimeout bounds one call, handler included. Default
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxArgumentBytes bounds a call's arguments. Default 1 MiB.
	MaxArgumentBytes int
	// MaxResultBytes bounds a handler's result, encoded. Default 4 MiB.
	MaxResultBytes int
	// MaxConcurrentCalls bounds the calls in flight on each service, so
	// that a service whose handler hangs holds only its own slots, never
	// another service's. More calls wait for a slot, within their
	// CallTimeout. Default 64.
	MaxConcurrentCalls int
	// Logger receives the runtime's own log lines. Default: discard.
	Logger *slog.Logger
	// Audit receives one line per call of an OAuth caller (see
	// httpapi.Options.OAuth, and Runtime.Audit), at level Info: kept apart from Logger, whose
	// level a server sets for its own noise. Default: Logger.
	Audit *slog.Logger
	// TracerProvider, if set, traces every call: a server span per call
	// (MCP, /v1/call, and Call itself when no transport started one), a
	// child of the caller's W3C trace context, passed on to the handler
	// plugin (see trace.go). Nil, or a no-op provider, is off: no span,
	// no trace context read or passed on. It is not
	// otel.GetTracerProvider() by default, as the global provider cannot
	// say whether anyone set it; pass it to use it.
	TracerProvider trace.TracerProvider
	// AuditArguments adds each call's arguments to its audit line
	// (toolc serve --audit-args). Off by default: arguments are the
	// users' data, which an audit log should not keep unless asked to.
	AuditArguments bool
}

func (o Options) withDefaults() Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxArgumentBytes <= 0 {
		o.MaxArgumentBytes = 1 << 20
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = 4 << 20
	}
	if o.MaxConcurrentCalls <= 0 {
		o.MaxConcurrentCalls = 64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Result is the outcome of a call, as MCP and the function-call API
// present it. A tool error (IsError) is a result, not an error: the model
// reads it and can correct its call.
type Result = plugins.Result

// Event is progress or a log line that a handler reports during a call.
type Event = plugins.Event

// ErrUnknownTool is returned for a call to a tool the snapshot does not
// have. MCP turns it into a JSON-RPC error, as the protocol asks.
var ErrUnknownTool = errors.New("unknown tool")

// ErrDraining is returned for a call that arrives after Drain began: the
// server is shutting down, and the caller should go elsewhere or retry.
var ErrDraining = errors.New("the server is shutting down and takes no new calls; retry, against another instance if there is one")

// Runtime serves the current snapshot.
type Runtime struct {
	opts Options
	// auditLog writes the audit lines (see Audit).
	auditLog *slog.Logger
	snap     atomic.Pointer[Snapshot]
	// tracing is nil when tracing is off.
	tracing *tracing
	// slots holds each service's call slots, by service name. A service
	// keeps its slots across swaps, so that a reload neither frees the
	// slots of calls still running nor doubles the limit. Guarded by mu.
	slots map[string]chan struct{}
	// stats holds each tool's counts (see Stats), by function name, kept
	// across swaps as the slots are. Guarded by mu.
	stats map[string]*toolStats
	// inflight counts the calls under way, and draining refuses new ones
	// once Drain began (see Drain for why the two suffice).
	inflight atomic.Int64
	draining atomic.Bool
	// callIDPrefix and calls make call IDs: "call-", the time the runtime
	// was made, "-", and the call's number.
	callIDPrefix string
	calls        atomic.Uint64

	// swapMu serialises swaps with their watchers, so that every watcher
	// sees the snapshots in the order they were stored, and the last one
	// it sees is the current one.
	swapMu   sync.Mutex
	mu       sync.Mutex
	watchers []func(*Snapshot)
}

// New returns a runtime with an empty snapshot.
func New(opts Options) *Runtime {
	opts = opts.withDefaults()
	rt := &Runtime{opts: opts, auditLog: auditLogger(opts), slots: map[string]chan struct{}{}, stats: map[string]*toolStats{}, tracing: newTracing(opts.TracerProvider)}
	rt.callIDPrefix = "call-" + strconv.FormatInt(time.Now().UnixNano(), 10) + "-"
	empty, _ := newSnapshot(&catalog.Catalog{Services: []*catalog.Service{}}, nil, rt)
	rt.snap.Store(empty)
	return rt
}

// Snapshot returns the current snapshot.
func (rt *Runtime) Snapshot() *Snapshot { return rt.snap.Load() }

// Options returns the runtime's options, with the defaults filled in.
func (rt *Runtime) Options() Options { return rt.opts }

// OnSwap registers f to run after every swap, with the new snapshot; the
// MCP server (package mcpserver) uses it to update its tool list and notify clients. f runs at
// once with the current snapshot. Watchers run one swap at a time, in the
// order of the swaps, so f must not call Swap or OnSwap.
func (rt *Runtime) OnSwap(f func(*Snapshot)) {
	rt.swapMu.Lock()
	defer rt.swapMu.Unlock()
	rt.mu.Lock()
	rt.watchers = append(rt.watchers, f)
	rt.mu.Unlock()
	f(rt.Snapshot())
}

// Swap replaces the snapshot with one serving cat through the dispatchers,
// keyed by service name. It refuses, and keeps the current snapshot, when a
// service has no dispatcher or its dispatcher lacks a handler for one of
// the service's tools. It returns the snapshot it replaced.
func (rt *Runtime) Swap(cat *catalog.Catalog, dispatchers map[string]Dispatcher) (*Snapshot, error) {
	return rt.swap(cat, dispatchers, nil)
}

func (rt *Runtime) swap(cat *catalog.Catalog, dispatchers map[string]Dispatcher, withheld []Withheld) (*Snapshot, error) {
	s, err := newSnapshot(cat, dispatchers, rt)
	if err != nil {
		return nil, err
	}
	s.setWithheld(withheld)
	rt.swapMu.Lock()
	defer rt.swapMu.Unlock()
	rt.mu.Lock()
	old := rt.snap.Swap(s)
	watchers := slices.Clone(rt.watchers)
	rt.mu.Unlock()
	for _, w := range watchers {
		w(s)
	}
	return old, nil
}

// serviceSlots returns the call slots of a service, made on first use.
func (rt *Runtime) serviceSlots(service string) chan struct{} {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	s := rt.slots[service]
	if s == nil {
		s = make(chan struct{}, rt.opts.MaxConcurrentCalls)
		rt.slots[service] = s
	}
	return s
}

// Snapshot is an immutable catalog with a dispatcher per service.
type Snapshot struct {
	Catalog *catalog.Catalog

	// dispatchers are the services' handlers by service name, for their
	// prompts and resources (see CallEntry).
	dispatchers map[string]Dispatcher

	byName map[string]*entry // function name
	byMCP  map[string]*entry // MCP name
	// maxArgs is the runtime's Options.MaxArgumentBytes, for Arguments.
	maxArgs int
	// deferred says that the catalog has deferred tools, which the
	// built-in tools reach (see deferred.go).
	deferred bool
	deferral deferral
	// withheld are the tools the catalog leaves out that a call is told
	// about, by function and MCP name (see SwapWithheld).
	withheld map[string]*Withheld
}

type entry struct {
	ToolInfo
	args     *validate.Validator
	result   *validate.Validator // nil without response fields
	dispatch Dispatcher
	slots    chan struct{} // the service's, shared by its tools
	stats    *toolStats
}

func newSnapshot(cat *catalog.Catalog, dispatchers map[string]Dispatcher, rt *Runtime) (*Snapshot, error) {
	s := &Snapshot{Catalog: cat, byName: map[string]*entry{}, byMCP: map[string]*entry{}, maxArgs: rt.opts.MaxArgumentBytes, deferred: cat.HasDeferred(), dispatchers: map[string]Dispatcher{}}
	var problems []string
	for _, svc := range cat.Services {
		d := dispatchers[svc.Name]
		if d == nil {
			problems = append(problems, fmt.Sprintf("service %q has no handler", svc.Name))
			continue
		}
		s.dispatchers[svc.Name] = d
		have := d.Tools()
		var missing []string
		for _, t := range svc.Tools {
			if !slices.Contains(have, t.Name) {
				missing = append(missing, t.Name)
			}
		}
		for _, name := range entryHandlers(svc) {
			if !slices.Contains(have, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("the handler of service %q lacks tools %s (it has %s)",
				svc.Name, strings.Join(missing, ", "), strings.Join(have, ", ")))
			continue
		}
		for _, t := range svc.Tools {
			args, err := validate.NewValidator(&t.Request)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %v", t.Name, err)
			}
			e := &entry{ToolInfo: ToolInfo{Service: svc, Tool: t, MCPName: t.ExposedMCPName(svc.Name)}, args: args, dispatch: d, slots: rt.serviceSlots(svc.Name), stats: rt.toolStats(t.Name)}
			if t.Response != nil {
				if e.result, err = validate.NewValidator(t.Response); err != nil {
					return nil, fmt.Errorf("tool %q response: %v", t.Name, err)
				}
			}
			if prev := s.byName[t.Name]; prev != nil {
				return nil, fmt.Errorf("tool %q is declared by services %q and %q", t.Name, prev.Service.Name, svc.Name)
			}
			if err := s.checkNames(e); err != nil {
				return nil, err
			}
			s.byName[t.Name] = e
			s.byMCP[e.MCPName] = e
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return s, nil
}

// checkNames refuses a tool that a client could call by a name that
// another tool already answers to, as function name or as MCP name: the
// call would run whichever tool the lookup found first. The compiler's
// unique-name and mcp-name rules refuse such a contract; this holds a
// catalog that did not come through them (a hand-edited file) to the same.
func (s *Snapshot) checkNames(e *entry) error {
	for _, name := range []string{e.Tool.Name, e.MCPName} {
		for _, prev := range []*entry{s.byName[name], s.byMCP[name]} {
			if prev != nil {
				return fmt.Errorf("tool %q of service %q (MCP name %q) and tool %q of service %q (MCP name %q) can both be called as %q: the names a client can call, function names and MCP names, must be unique across the catalog",
					prev.Tool.Name, prev.Service.Name, prev.MCPName, e.Tool.Name, e.Service.Name, e.MCPName, name)
			}
		}
	}
	return nil
}

// lookup finds a tool by function name or MCP name.
func (s *Snapshot) lookup(name string) *entry {
	if e := s.byName[name]; e != nil {
		return e
	}
	return s.byMCP[name]
}

// ByName finds a tool by its function name.
func (s *Snapshot) ByName(name string) (ToolInfo, bool) {
	if e := s.byName[name]; e != nil {
		return e.ToolInfo, true
	}
	return ToolInfo{}, false
}

// ByMCPName finds a tool by its MCP name, as an MCP client calls it.
func (s *Snapshot) ByMCPName(name string) (ToolInfo, bool) {
	if e := s.byMCP[name]; e != nil {
		return e.ToolInfo, true
	}
	return ToolInfo{}, false
}

// Lookup finds a tool by function name or MCP name, as Call does.
func (s *Snapshot) Lookup(name string) (ToolInfo, bool) {
	if e := s.lookup(name); e != nil {
		return e.ToolInfo, true
	}
	return ToolInfo{}, false
}

// Call runs a tool by function name or MCP name with JSON arguments: an
// object, or a JSON string holding an object, as OpenAI's tool_calls carry
// them. Invalid arguments, a failing handler and a timeout are tool errors
// in the result; the error return is for an unknown tool only, or a
// context of the caller's that ended before the call finished.
//
// When ctx carries an OAuth caller (oauth.WithCaller; httpapi's OAuth
// guard puts it there), the call is the caller's: a tool whose service's
// scopes its token lacks is an unknown tool (ErrUnknownTool, in the same
// words), one whose own scopes it lacks an *InsufficientScopeError, and
// the handler sees the caller as plugins.CallerOf.
func (rt *Runtime) Call(ctx context.Context, name string, args json.RawMessage) (*Result, error) {
	return rt.CallWithEvents(ctx, name, args, nil)
}

// CallWithEvents is Call with a callback for the handler's progress and
// log events.
func (rt *Runtime) CallWithEvents(ctx context.Context, name string, args json.RawMessage, onEvent func(Event)) (res *Result, err error) {
	var cs *Span
	if rt.tracing != nil {
		// A transport (MCP, /v1/call) started the call's span already;
		// a direct call gets its own, a child of whatever span ctx has.
		if cs = spanFrom(ctx); cs == nil || cs.claimed {
			ctx, cs = rt.tracing.start(ctx, operationExecTool, "", nil, nil, trace.SpanKindInternal)
			cs.tool(operationExecTool, truncate(name, MaxCallName))
			cs.caller(caller.From(ctx))
			defer func() { cs.End(res, err) }()
		}
		cs.claimed = true
	}
	snap := rt.Snapshot()
	e := snap.lookup(name)
	if e == nil {
		if t := snap.builtin(name); t != nil {
			return rt.callBuiltin(ctx, snap, t, args, onEvent)
		}
		return nil, snap.Unknown(caller.From(ctx), name)
	}
	if c := caller.From(ctx); c != nil {
		switch AccessTo(c, e.ToolInfo) {
		case Hidden:
			return nil, &hiddenToolError{name}
		case StepUp:
			return nil, &InsufficientScopeError{Tool: name, Scopes: e.Tool.Scopes}
		}
		ctx = withCaller(ctx, c)
	}
	// Drain reads inflight after it sets draining; a call counts itself
	// before it reads draining. With both atomic, either the call sees
	// draining and turns back, or Drain sees the call and waits for it.
	rt.inflight.Add(1)
	defer rt.inflight.Add(-1)
	if rt.draining.Load() {
		e.stats.refused()
		cs.ran(e, "", "", ErrDraining)
		return nil, ErrDraining
	}
	start := time.Now()
	res, kind, err := rt.call(ctx, e, name, args, onEvent, cs)
	if kind != kindChecked {
		// A call its transport's check refused is not counted, as one
		// the transport refused before the runtime saw it is not.
		e.stats.observe(start, kind, err)
	}
	return res, err
}

// Drain stops the runtime taking new calls (they get ErrDraining) and
// waits until the calls in flight have finished, or ctx ends. It returns
// how many calls were still running then. A server that shuts down drains
// first, then stops its plugins, so that no call is cut off unless it runs
// past the grace period ctx gives.
func (rt *Runtime) Drain(ctx context.Context) int {
	rt.draining.Store(true)
	// A poll rather than a condition variable: it costs the calls
	// nothing, and the shutdown it serves is counted in seconds.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := int(rt.inflight.Load())
		if n == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
		}
	}
}

// InFlight returns the number of calls under way.
func (rt *Runtime) InFlight() int { return int(rt.inflight.Load()) }

// Draining reports whether Drain began: a load balancer's health check
// then takes the instance out of rotation.
func (rt *Runtime) Draining() bool { return rt.draining.Load() }

// call runs a call on one entry. kind classifies a tool error for the
// counts: invalid_arguments, handler, timeout or result. called is the
// name the client called the tool by, its function name or its MCP name:
// every message the client reads names the tool as the client knows it,
// not by a contract key it never saw (a port keeps Notion's MCP name
// API-get-user, whose key is api-get-user).
func (rt *Runtime) call(ctx context.Context, e *entry, called string, args json.RawMessage, onEvent func(Event), cs *Span) (res *Result, kind string, err error) {
	callID := ""
	defer func() { cs.ran(e, callID, kind, err) }()
	given, valid, err := e.arguments(called, args, rt.opts.MaxArgumentBytes)
	if err != nil {
		return toolError("%v", err), "invalid_arguments", nil
	}
	if check := argumentCheckFrom(ctx); check != nil {
		if err := check(e.ToolInfo, given, valid); err != nil {
			return nil, kindChecked, err
		}
	}

	// The call's timeout counts from here and covers the wait for a slot
	// too: a call never takes longer than CallTimeout in all.
	timeout := rt.callTimeout(ctx)
	deadline := time.Now().Add(timeout)
	select {
	case e.slots <- struct{}{}:
	default:
		if res, err := rt.waitForSlot(ctx, e, called, deadline); res != nil || err != nil {
			return res, "overloaded", err
		}
	}
	defer func() { <-e.slots }()
	caller := ctx
	var release context.CancelFunc
	if _, inProcess := e.dispatch.(*local); inProcess {
		// Most in-process handlers never wait on their context: the
		// lazy deadline saves them a timer.
		ctx, release = lazydeadline.WithDeadline(ctx, deadline)
	} else {
		// A plugin call waits on it at once (the client ties the RPC's
		// cancellation to it), where the context package's own is
		// cheaper. This side's timer is what ends a call whose plugin
		// no longer answers; the plugin's copy of the deadline is lazy.
		ctx, release = context.WithDeadline(ctx, deadline)
		// The client refuses a result over the limit as it arrives,
		// rather than receive it whole for checkResult to refuse.
		ctx = plugins.WithResultLimit(ctx, rt.opts.MaxResultBytes)
	}
	defer release()

	callID = rt.newCallID()
	res, err = e.dispatch.Call(ctx, e.Tool.Name, callID, valid, onEvent)
	// The plugin's copy of a deadline can fire a moment before this side's
	// own timer does, so which deadline ended the call is read from the
	// deadlines, not from which context has noticed yet.
	callerDeadline, callerHas := caller.Deadline()
	ownDeadline, _ := ctx.Deadline()
	callersFirst := callerHas && !callerDeadline.After(ownDeadline)
	var tooLarge *plugins.ResultTooLargeError
	switch {
	case err != nil && caller.Err() != nil:
		// The caller gave up (its own deadline or cancellation), not the
		// runtime's CallTimeout: that is the caller's error to see.
		return nil, "", caller.Err()
	case err != nil && errors.Is(err, context.DeadlineExceeded) && callersFirst:
		return nil, "", context.DeadlineExceeded
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return toolError("%s did not finish within %s and was cancelled", called, timeout), "timeout", nil
	case err != nil && ctx.Err() != nil:
		return nil, "", ctx.Err()
	case errors.As(err, &tooLarge) && tooLarge.Size > 0:
		return toolError("the result of %s is %d bytes, over the limit of %d; it was refused as it arrived, before the host read it", e.Tool.Name, tooLarge.Size, rt.opts.MaxResultBytes), "result", nil
	case errors.As(err, &tooLarge):
		return toolError("the result of %s is over the limit of %d bytes; it was refused as it arrived, before the host read it", e.Tool.Name, rt.opts.MaxResultBytes), "result", nil
	case err != nil:
		rt.opts.Logger.Warn("handler failed", "service", e.Service.Name, "tool", e.Tool.Name, "error", err)
		return toolError("the handler of %s failed: %v", called, err), "handler", nil
	case res == nil:
		return toolError("the handler of %s returned no result", called), "handler", nil
	case len(res.InputRequests) > 0:
		// Not a result yet: questions for the client (plugins.Elicit and
		// the like). They are bounded like a result, and the caller asks
		// and calls again.
		size := 0
		for _, q := range res.InputRequests {
			size += len(q.ID) + len(q.Method) + len(q.Params)
		}
		if size > rt.opts.MaxResultBytes {
			return toolError("the questions of %s are %d bytes, over the limit of %d", called, size, rt.opts.MaxResultBytes), "result", nil
		}
		return res, "", nil
	case res.MissingCapability != "":
		return res, "missing_capability", nil
	}
	res = validText(res)
	checked := rt.checkResult(e, called, res)
	switch {
	case checked != res:
		return checked, "result", nil
	case res.IsError:
		return res, "handler", nil
	}
	return res, "", nil
}

// waitForSlot waits for one of the service's call slots until the call's
// deadline or the caller's context ends. A nil result and error mean the
// call holds a slot.
func (rt *Runtime) waitForSlot(ctx context.Context, e *entry, called string, deadline time.Time) (*Result, error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case e.slots <- struct{}{}:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return toolError("%s was not run: service %q has %d calls in flight, its limit, and none finished within %s",
			called, e.Service.Name, cap(e.slots), rt.opts.CallTimeout), nil
	}
}

// checkResult holds a handler's result to the contract: its size, and its
// structured content against the response fields, so that a model never
// reads a result the contract does not promise.
func (rt *Runtime) checkResult(e *entry, called string, res *Result) *Result {
	size := 0
	for _, c := range res.Content {
		size += len(c.Text) + len(c.Data)
		if c.Resource != nil {
			size += len(c.Resource.Text) + len(c.Resource.Blob)
		}
	}
	var structured []byte
	switch v := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		// Encoded already (by plugins.JSON, or across the plugin
		// boundary): json.Marshal would only copy and compact it, which
		// cost a third of an in-process call. Its validity is checked
		// below, by the response's validator or by json.Valid.
		structured = v
		size += len(v)
	default:
		var err error
		if structured, err = json.Marshal(v); err != nil {
			return toolError("the handler of %s returned structured content that is not JSON: %v", called, err)
		}
		size += len(structured)
	}
	if size > rt.opts.MaxResultBytes {
		return toolError("the result of %s is %d bytes, over the limit of %d", called, size, rt.opts.MaxResultBytes)
	}
	if e.result == nil || res.IsError {
		if structured != nil && !json.Valid(structured) {
			return toolError("the handler of %s returned structured content that is not JSON", called)
		}
		return res
	}
	if structured == nil {
		return toolError("the handler of %s returned no structured content, but the contract declares response fields", called)
	}
	if _, err := e.result.Validate(structured); err != nil {
		return toolError("the handler of %s returned a result that breaks its contract: %v", called, err)
	}
	return res
}

// validText returns res, or a copy of it whose texts are UTF-8, with
// U+FFFD for the bytes that were not: an in-process handler's result (a
// plugin's SDK has replaced them already). A client's JSON decoder would
// refuse the invalid bytes, or the whole message.
func validText(res *Result) *Result {
	valid := true
	for _, c := range res.Content {
		valid = valid && utf8.ValidString(c.Text) && (c.Resource == nil || utf8.ValidString(c.Resource.Text))
	}
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if valid && (!isRaw || utf8.Valid(raw)) {
		return res
	}
	cp := *res
	if isRaw {
		// Invalid bytes can only be inside the strings of valid JSON; as
		// U+FFFD they stay inside them.
		cp.StructuredContent = json.RawMessage(bytes.ToValidUTF8(raw, []byte("\uFFFD")))
	}
	cp.Content = slices.Clone(res.Content)
	for i, c := range cp.Content {
		c.Text = strings.ToValidUTF8(c.Text, "\uFFFD")
		if c.Resource != nil {
			r := *c.Resource
			r.Text = strings.ToValidUTF8(r.Text, "\uFFFD")
			c.Resource = &r
		}
		cp.Content[i] = c
	}
	return &cp
}

// unwrapStringArguments accepts arguments as an object or as a JSON string
// holding an object, which is how OpenAI's tool_calls carry them.
// It looks at the first byte that is not JSON white space, rather than
// copying the arguments into a string to trim them, as every call passes
// here.
func unwrapStringArguments(args json.RawMessage) (json.RawMessage, error) {
	i := 0
	for i < len(args) && (args[i] == ' ' || args[i] == '\t' || args[i] == '\n' || args[i] == '\r') {
		i++
	}
	if i == len(args) || args[i] != '"' {
		return args, nil
	}
	var s string
	if err := json.Unmarshal(args, &s); err != nil {
		return nil, fmt.Errorf("the arguments are a malformed JSON string: %v", err)
	}
	return json.RawMessage(s), nil
}

func toolError(format string, args ...any) *Result {
	return plugins.Errorf(format, args...)
}

// newCallID names a call uniquely: the runtime's own prefix, made when it
// was created, and a sequence number.
func (rt *Runtime) newCallID() string {
	b := make([]byte, 0, 48)
	b = append(b, rt.callIDPrefix...)
	b = strconv.AppendUint(b, rt.calls.Add(1), 10)
	return string(b)
}

// Tools returns the snapshot's tools with their services, in catalog order.
func (s *Snapshot) Tools() []ToolInfo {
	var out []ToolInfo
	for svc, t := range s.Catalog.Tools() {
		if e := s.byName[t.Name]; e != nil {
			out = append(out, ToolInfo{Service: svc, Tool: t, MCPName: e.MCPName})
		}
	}
	return out
}

// ToolInfo describes one served tool.
type ToolInfo struct {
	Service *catalog.Service
	Tool    *catalog.Tool
	MCPName string
}

// MaxCallName bounds the tool name of a request where it is echoed (an
// error, a span) or read (the envelope of POST /v1/call): tool and MCP
// names are at most 64 characters, and an unknown name comes from the
// caller, who must not have megabytes echoed.
const MaxCallName = 256

// QuoteName quotes a tool name for an error message, cut to its first
// MaxCallName bytes.
func QuoteName(name string) string {
	if len(name) <= MaxCallName {
		return strconv.Quote(name)
	}
	cut := MaxCallName
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut-- // do not split a character
	}
	return fmt.Sprintf("%q... (%d bytes)", name[:cut], len(name))
}
