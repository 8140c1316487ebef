package runtime

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolc/toolc/oauth"
)

// Tracing: one span per tool call at the server, named and attributed as
// OpenTelemetry's semantic conventions for MCP and GenAI tool execution
// have it ("tools/call get_weather", kind server, gen_ai.tool.name,
// mcp.method.name, error.type...). Its parent is the caller's trace
// context: params._meta's traceparent for MCP (SEP-414, and the
// conventions' choice), else the HTTP request's traceparent header. The
// plugin client passes the span on to the plugin in the gRPC metadata, and
// the plugin's span of the handler is its child.
//
// The attribute names are written out here rather than taken from
// go.opentelemetry.io/otel/semconv: its newest package in otel v1.47.0
// (v1.43.0) dropped the gen_ai and mcp namespaces, which are still in
// development, and an older package would mix schema versions for the sake
// of a few strings.
const (
	attrToolName      = attribute.Key("gen_ai.tool.name")
	attrToolCallID    = attribute.Key("gen_ai.tool.call.id")
	attrOperation     = attribute.Key("gen_ai.operation.name")
	attrMCPMethod     = attribute.Key("mcp.method.name")
	attrMCPSession    = attribute.Key("mcp.session.id")
	attrMCPProtocol   = attribute.Key("mcp.protocol.version")
	attrErrorType     = attribute.Key("error.type")
	attrRPCStatus     = attribute.Key("rpc.response.status_code")
	attrHTTPStatus    = attribute.Key("http.response.status_code")
	attrTransport     = attribute.Key("network.transport")
	attrEnduser       = attribute.Key("enduser.id")
	attrClientID      = attribute.Key("toolc.caller.client_id")
	attrService       = attribute.Key("toolc.service")
	attrTool          = attribute.Key("toolc.tool")
	attrOutcome       = attribute.Key("toolc.outcome")
	attrErrorKind     = attribute.Key("toolc.error.kind")
	operationExecTool = "execute_tool"
)

// Outcomes of a call, the toolc.outcome attribute.
const (
	outcomeOK            = "ok"
	outcomeToolError     = "tool_error"     // a result with isError
	outcomeTimeout       = "timeout"        // the runtime's CallTimeout ended it
	outcomeProtocolError = "protocol_error" // a JSON-RPC error, or a 4xx of /v1/call
	outcomeCancelled     = "cancelled"      // the caller cancelled or went away
	outcomeDeadline      = "deadline"       // the caller's own deadline passed
	outcomeUnavailable   = "unavailable"    // draining, or no handler process to run it
	outcomeInputRequired = "input_required" // a 2026-07-28 round that asks the client
)

// tracing is the runtime's tracer, or off: then no span is started, no
// trace context is read from a request, and none reaches a plugin.
type tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

func newTracing(tp trace.TracerProvider) *tracing {
	if tp == nil {
		return nil
	}
	if _, off := tp.(noop.TracerProvider); off {
		return nil
	}
	return &tracing{tracer: tp.Tracer("github.com/toolc/toolc/runtime"), prop: propagation.TraceContext{}}
}

// callSpan is the server span of one call, put on the call's context so
// that CallWithEvents adds what only it knows (the service, the call ID,
// the kind of a tool error) to the span the transport started, rather
// than starting a second one. Its methods do nothing on a nil callSpan,
// which is what an untraced call has.
type callSpan struct {
	span      trace.Span
	recording bool
	// kind and err are what the runtime made of the call.
	kind string
	err  error
	// claimed is set by the CallWithEvents that runs the call. A call
	// that its handler makes, with the handler's context, finds the span
	// claimed and makes a span of its own, a child, rather than writing
	// over its caller's.
	claimed bool
}

type callSpanKey struct{}

func callSpanFrom(ctx context.Context) *callSpan {
	cs, _ := ctx.Value(callSpanKey{}).(*callSpan)
	return cs
}

// start starts the server span of a call of tool (empty when not known
// yet), as a child of the trace context in meta (MCP's params._meta) or
// else in header. A context in header that is not the parent is linked,
// as the conventions ask of the transport's context.
func (tr *tracing) start(ctx context.Context, method, tool string, meta mcp.Meta, header http.Header, kind trace.SpanKind) (context.Context, *callSpan) {
	parent := ctx
	var links []trace.Link
	if header != nil {
		parent = tr.prop.Extract(ctx, propagation.HeaderCarrier(header))
	}
	if meta != nil {
		if m := tr.prop.Extract(ctx, metaCarrier(meta)); trace.SpanContextFromContext(m).IsValid() {
			if sc := trace.SpanContextFromContext(parent); sc.IsValid() && !sc.Equal(trace.SpanContextFromContext(m)) {
				links = append(links, trace.Link{SpanContext: sc})
			}
			parent = m
		}
	}
	name := method
	if tool != "" {
		name += " " + tool
	}
	ctx, span := tr.tracer.Start(parent, name, trace.WithSpanKind(kind), trace.WithLinks(links...))
	cs := &callSpan{span: span, recording: span.IsRecording()}
	if cs.recording {
		span.SetAttributes(attrOperation.String(operationExecTool))
		if method == "tools/call" {
			span.SetAttributes(attrMCPMethod.String(method))
		}
		if tool != "" {
			span.SetAttributes(attrToolName.String(tool))
		}
	}
	return context.WithValue(ctx, callSpanKey{}, cs), cs
}

// caller records the OAuth caller's subject and client.
func (cs *callSpan) caller(c *oauth.Caller) {
	if cs == nil || !cs.recording || c == nil {
		return
	}
	cs.span.SetAttributes(attrEnduser.String(c.Subject))
	if c.ClientID != "" {
		cs.span.SetAttributes(attrClientID.String(c.ClientID))
	}
}

// tool names the span after the tool, once the request has named it.
func (cs *callSpan) tool(method, name string) {
	if cs == nil || !cs.recording {
		return
	}
	cs.span.SetName(method + " " + name)
	cs.span.SetAttributes(attrToolName.String(name))
}

// ran records what the runtime knows of the call: its entry, and how it
// classified its end.
func (cs *callSpan) ran(e *entry, callID, kind string, err error) {
	if cs == nil {
		return
	}
	cs.kind, cs.err = kind, err
	if !cs.recording {
		return
	}
	cs.span.SetAttributes(attrService.String(e.service.Name), attrTool.String(e.tool.Name))
	if callID != "" {
		cs.span.SetAttributes(attrToolCallID.String(callID))
	}
	if kind != "" {
		cs.span.SetAttributes(attrErrorKind.String(kind))
	}
}

// end ends the span with the outcome of a call answered with res and err,
// as Runtime.CallWithEvents returns them.
func (cs *callSpan) end(res *Result, err error) {
	if cs == nil {
		return
	}
	switch {
	case err != nil:
		cs.fail(errorOutcome(err), errorType(err), err.Error())
	case res != nil && res.IsError:
		cs.toolError(res)
	case res != nil && len(res.InputRequests) > 0:
		cs.finish(outcomeInputRequired)
	default:
		cs.finish(outcomeOK)
	}
}

// endMCP ends the span of a tools/call with the answer the MCP server
// sends.
func (cs *callSpan) endMCP(res mcp.Result, err error) {
	if cs == nil {
		return
	}
	var rpcErr *jsonrpc.Error
	switch r, _ := res.(*mcp.CallToolResult); {
	case errors.As(err, &rpcErr):
		code := strconv.FormatInt(rpcErr.Code, 10)
		if cs.recording {
			cs.span.SetAttributes(attrRPCStatus.String(code))
		}
		cs.fail(outcomeProtocolError, code, rpcErr.Message)
	case err != nil:
		cs.fail(errorOutcome(err), errorType(err), err.Error())
	case r != nil && r.IsError:
		cs.toolError(nil)
	case r != nil && len(r.InputRequests) > 0:
		cs.finish(outcomeInputRequired)
	default:
		cs.finish(outcomeOK)
	}
}

// endHTTP ends the span of a /v1/call that was answered with status and,
// for an error, msg.
func (cs *callSpan) endHTTP(status int, outcome, msg string) {
	if cs == nil {
		return
	}
	if cs.recording {
		cs.span.SetAttributes(attrHTTPStatus.Int(status))
	}
	cs.fail(outcome, strconv.Itoa(status), msg)
}

func (cs *callSpan) toolError(res *Result) {
	outcome := outcomeToolError
	if cs.kind == "timeout" {
		outcome = outcomeTimeout
	}
	msg := ""
	if res != nil && len(res.Content) > 0 {
		msg = res.Content[0].Text
	}
	// error.type is tool_error for a result with isError, as the
	// conventions ask; the kind says which.
	cs.fail(outcome, outcomeToolError, msg)
}

func (cs *callSpan) fail(outcome, errType, msg string) {
	if cs.recording {
		cs.span.SetAttributes(attrOutcome.String(outcome), attrErrorType.String(errType))
		cs.span.SetStatus(codes.Error, msg)
	}
	cs.span.End()
}

func (cs *callSpan) finish(outcome string) {
	if cs.recording {
		cs.span.SetAttributes(attrOutcome.String(outcome))
	}
	cs.span.End()
}

func errorOutcome(err error) string {
	var scopeErr *InsufficientScopeError
	switch {
	case errors.As(err, &scopeErr):
		return outcomeProtocolError
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeDeadline
	case errors.Is(err, context.Canceled):
		return outcomeCancelled
	case errors.Is(err, ErrUnknownTool):
		return outcomeProtocolError
	}
	return outcomeUnavailable
}

func errorType(err error) string {
	var scopeErr *InsufficientScopeError
	switch {
	case errors.As(err, &scopeErr):
		return "insufficient_scope"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, ErrUnknownTool):
		return "unknown_tool"
	case errors.Is(err, ErrDraining):
		return "draining"
	}
	return "unavailable"
}

// traceCalls is the outermost receiving middleware of the MCP server: one
// server span per tools/call, whatever answers it (go-sdk for an unknown
// tool, the scope filter, the runtime).
func (rt *Runtime) traceCalls(next mcp.MethodHandler) mcp.MethodHandler {
	tr := rt.tracing
	if tr == nil {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if method != "tools/call" || !ok || p == nil {
			return next(ctx, method, req)
		}
		var header http.Header
		if extra := req.GetExtra(); extra != nil {
			header = extra.Header
		}
		// A name no tool has would make a span name of the caller's
		// choosing: the span is named after known tools only.
		tool := ""
		if rt.Snapshot().byMCP[p.Name] != nil {
			tool = p.Name
		}
		ctx, cs := tr.start(ctx, method, tool, p.Meta, header, trace.SpanKindServer)
		if cs.recording {
			transport := "pipe" // stdio
			if header != nil {
				transport = "tcp"
			}
			cs.span.SetAttributes(attrTransport.String(transport))
			if tool == "" {
				cs.span.SetAttributes(attrToolName.String(truncate(p.Name, maxCallName)))
			}
			if call, ok := req.(*mcp.CallToolRequest); ok {
				if v := call.ProtocolVersion(); v != "" {
					cs.span.SetAttributes(attrMCPProtocol.String(v))
				}
				if call.Session != nil {
					if id := call.Session.ID(); id != "" {
						cs.span.SetAttributes(attrMCPSession.String(id))
					}
				}
			}
			cs.caller(callerOf(req))
		}
		res, err := next(ctx, method, req)
		cs.endMCP(res, err)
		return res, err
	}
}

// truncate cuts s to at most n bytes, for a caller's string in a span,
// and keeps it UTF-8: OTLP's protobuf refuses a batch with a string that
// is not.
func truncate(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// metaCarrier reads and writes the trace context in MCP's params._meta,
// whose values are JSON values, not only strings.
type metaCarrier mcp.Meta

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// traceRefused records the span of a tools/call that the HTTP layer
// answered with 403 before the MCP server saw it (mcpScopeCheck).
func (rt *Runtime) traceRefused(r *http.Request, meta mcp.Meta, tool string, c *oauth.Caller, msg string) {
	if rt.tracing == nil {
		return
	}
	_, cs := rt.tracing.start(r.Context(), "tools/call", tool, meta, r.Header, trace.SpanKindServer)
	if cs.recording {
		cs.span.SetAttributes(attrTransport.String("tcp"))
	}
	cs.caller(c)
	cs.endHTTP(http.StatusForbidden, outcomeProtocolError, msg)
}
