package runtime

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolc/toolc/internal/caller"
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
	attrPromptName    = attribute.Key("gen_ai.prompt.name")
	attrResourceURI   = attribute.Key("mcp.resource.uri")
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

// Span is the server span of one call, put on the call's context so that
// CallWithEvents adds what only it knows (the service, the call ID, the
// kind of a tool error) to the span the transport started, rather than
// starting a second one. Its methods do nothing on a nil Span, which is
// what an untraced call has.
type Span struct {
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

type spanKey struct{}

func spanFrom(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// SpanStart is what a transport knows of a call as it starts the call's
// span.
type SpanStart struct {
	// Method is the MCP method: "tools/call", "prompts/get" or
	// "resources/read"; or "" for a call of the function-call API (POST
	// /v1/call), whose span is execute_tool.
	Method string
	// Tool is the name the MCP request calls: the tool's, or the
	// prompt's for prompts/get. The span is named after it only when the
	// snapshot has a tool (prompt) of that MCP name: else the caller
	// would choose the span's name. A /v1/call names its tool later, with
	// SetTool.
	Tool string
	// URI is the URI a resources/read reads: an attribute, never in the
	// span's name, which the conventions keep of low cardinality.
	URI string
	// Meta is the trace context of MCP's params._meta, if the request has
	// one: the span's parent (SEP-414, and the conventions' choice).
	Meta propagation.TextMapCarrier
	// Header is the HTTP request's header, nil over stdio. Its
	// traceparent is the parent when Meta has none, and is linked when
	// Meta has another.
	Header http.Header
	// ProtocolVersion and Session are the MCP request's revision and
	// session ID, if any.
	ProtocolVersion, Session string
	// Caller is the request's OAuth caller, if any.
	Caller *caller.Caller
}

// Tracing reports whether the runtime traces calls (Options.TracerProvider),
// so that a transport can skip reading a request for a span that is not
// made.
func (rt *Runtime) Tracing() bool { return rt.tracing != nil }

// StartSpan starts the server span of a call that a transport received,
// whatever then answers it (the transport's own refusal, or the runtime):
// the Span is on the returned context, for CallWithEvents. It returns ctx
// and a nil Span when tracing is off.
func (rt *Runtime) StartSpan(ctx context.Context, st SpanStart) (context.Context, *Span) {
	tr := rt.tracing
	if tr == nil {
		return ctx, nil
	}
	if st.Method == "" {
		ctx, s := tr.start(ctx, operationExecTool, "", st.Meta, st.Header, trace.SpanKindServer)
		s.caller(st.Caller)
		return ctx, s
	}
	snap := rt.Snapshot()
	name, nameAttr := "", attrToolName
	switch st.Method {
	case "prompts/get":
		nameAttr = attrPromptName
		if snap.hasPrompt(st.Tool) {
			name = st.Tool
		}
	case "resources/read":
		nameAttr = ""
	default:
		if _, ok := snap.ByMCPName(st.Tool); ok {
			name = st.Tool
		}
	}
	ctx, s := tr.start(ctx, st.Method, name, st.Meta, st.Header, trace.SpanKindServer)
	if s.recording {
		transport := "pipe" // stdio
		if st.Header != nil {
			transport = "tcp"
		}
		s.span.SetAttributes(attrTransport.String(transport))
		switch {
		case nameAttr == "":
			s.span.SetAttributes(attrResourceURI.String(truncate(st.URI, MaxURI)))
		case name == "":
			s.span.SetAttributes(nameAttr.String(truncate(st.Tool, MaxCallName)))
		}
		if st.ProtocolVersion != "" {
			s.span.SetAttributes(attrMCPProtocol.String(st.ProtocolVersion))
		}
		if st.Session != "" {
			s.span.SetAttributes(attrMCPSession.String(st.Session))
		}
		s.caller(st.Caller)
	}
	return ctx, s
}

// MaxURI bounds the resource URI a span records: a client chooses it, and
// no resource's is longer.
const MaxURI = 2048

// hasPrompt reports whether the snapshot serves a prompt of that name.
func (s *Snapshot) hasPrompt(name string) bool {
	for _, svc := range s.Catalog.Services {
		for _, p := range svc.Prompts {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// start starts the server span of a call of tool (empty when not known
// yet), as a child of the trace context in meta (MCP's params._meta) or
// else in header. A context in header that is not the parent is linked,
// as the conventions ask of the transport's context.
func (tr *tracing) start(ctx context.Context, method, tool string, meta propagation.TextMapCarrier, header http.Header, kind trace.SpanKind) (context.Context, *Span) {
	parent := ctx
	var links []trace.Link
	if header != nil {
		parent = tr.prop.Extract(ctx, propagation.HeaderCarrier(header))
	}
	if meta != nil {
		if m := tr.prop.Extract(ctx, meta); trace.SpanContextFromContext(m).IsValid() {
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
	s := &Span{span: span, recording: span.IsRecording()}
	if s.recording {
		switch method {
		case "prompts/get":
			span.SetAttributes(attrMCPMethod.String(method))
			if tool != "" {
				span.SetAttributes(attrPromptName.String(tool))
			}
		case "resources/read":
			span.SetAttributes(attrMCPMethod.String(method))
		default:
			span.SetAttributes(attrOperation.String(operationExecTool))
			if method == "tools/call" {
				span.SetAttributes(attrMCPMethod.String(method))
			}
			if tool != "" {
				span.SetAttributes(attrToolName.String(tool))
			}
		}
	}
	return context.WithValue(ctx, spanKey{}, s), s
}

// entry records the service and handler that serve a prompt or resource
// (toolc.tool is then "prompt:NAME" or "resource:NAME"); every round of a
// prompts/get that asks back runs the same one.
func (s *Span) entry(service, handler string) {
	if s == nil || !s.recording {
		return
	}
	s.span.SetAttributes(attrService.String(service), attrTool.String(handler))
}

// caller records the OAuth caller's subject and client.
func (s *Span) caller(c *caller.Caller) {
	if s == nil || !s.recording || c == nil {
		return
	}
	s.span.SetAttributes(attrEnduser.String(c.Subject))
	if c.ClientID != "" {
		s.span.SetAttributes(attrClientID.String(c.ClientID))
	}
}

// SetTool names the span of a function-call API request after its tool,
// once the request has named one the snapshot has.
func (s *Span) SetTool(name string) { s.tool(operationExecTool, name) }

// tool names the span after the tool, once the request has named it.
func (s *Span) tool(method, name string) {
	if s == nil || !s.recording {
		return
	}
	s.span.SetName(method + " " + name)
	s.span.SetAttributes(attrToolName.String(name))
}

// ran records what the runtime knows of the call: its entry, and how it
// classified its end.
func (s *Span) ran(e *entry, callID, kind string, err error) {
	if s == nil {
		return
	}
	s.kind, s.err = kind, err
	if !s.recording {
		return
	}
	s.span.SetAttributes(attrService.String(e.Service.Name), attrTool.String(e.Tool.Name))
	if callID != "" {
		s.span.SetAttributes(attrToolCallID.String(callID))
	}
	if kind != "" {
		s.span.SetAttributes(attrErrorKind.String(kind))
	}
}

// End ends the span with the outcome of a call answered with res and err,
// as Runtime.CallWithEvents returns them.
func (s *Span) End(res *Result, err error) {
	if s == nil {
		return
	}
	switch {
	case err != nil:
		s.fail(errorOutcome(err), errorType(err), err.Error())
	case res != nil && res.IsError:
		msg := ""
		if len(res.Content) > 0 {
			msg = res.Content[0].Text
		}
		s.toolError(msg)
	case res != nil && len(res.InputRequests) > 0:
		s.finish(outcomeInputRequired)
	default:
		s.finish(outcomeOK)
	}
}

// EndResult ends the span of a call that MCP answered with a result: a
// tool error (isError), questions for the client of a 2026-07-28 round
// (inputRequired), or else a success. The status message of a tool error
// is left empty here, as the MCP result's content is no longer the
// runtime's.
func (s *Span) EndResult(isError, inputRequired bool) {
	if s == nil {
		return
	}
	switch {
	case isError:
		s.toolError("")
	case inputRequired:
		s.finish(outcomeInputRequired)
	default:
		s.finish(outcomeOK)
	}
}

// EndRPCError ends the span of a call answered with a JSON-RPC error.
func (s *Span) EndRPCError(code int64, msg string) {
	if s == nil {
		return
	}
	c := strconv.FormatInt(code, 10)
	if s.recording {
		s.span.SetAttributes(attrRPCStatus.String(c))
	}
	s.fail(outcomeProtocolError, c, msg)
}

// EndHTTPError ends the span of a call that the HTTP layer refused with
// status and msg before the runtime answered it.
func (s *Span) EndHTTPError(status int, msg string) {
	if s == nil {
		return
	}
	if s.recording {
		s.span.SetAttributes(attrHTTPStatus.Int(status))
	}
	s.fail(outcomeProtocolError, strconv.Itoa(status), msg)
}

// toolError ends the span of a result with isError, with msg as its
// status message.
func (s *Span) toolError(msg string) {
	outcome := outcomeToolError
	if s.kind == "timeout" {
		outcome = outcomeTimeout
	}
	// error.type is tool_error for a result with isError, as the
	// conventions ask; the kind says which.
	s.fail(outcome, outcomeToolError, msg)
}

func (s *Span) fail(outcome, errType, msg string) {
	if s.recording {
		s.span.SetAttributes(attrOutcome.String(outcome), attrErrorType.String(errType))
		s.span.SetStatus(codes.Error, msg)
	}
	s.span.End()
}

func (s *Span) finish(outcome string) {
	if s.recording {
		s.span.SetAttributes(attrOutcome.String(outcome))
	}
	s.span.End()
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
