package rpc

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/toolc/toolc/internal/otelenv"
	"github.com/toolc/toolc/plugins"
)

// The trace context of a call crosses the process boundary as W3C
// traceparent and tracestate: the host writes the span context of the
// call's context (the runtime's server span, when tracing is on), and the
// plugin's span of the handler is its child. To a plugin of version 7 it
// goes in the request (CallRequest.trace_context), so that a traced call
// takes the Calls stream like any other; to an older one, in the gRPC
// metadata of a Call RPC, which plugins of every version read. One that
// does not trace ignores either.
//
// An explicit propagator rather than otelgrpc's stats
// handlers, which would add a client and a server span of the RPC around
// every call, and their metrics, where toolc wants the handler's span to
// be the server span's child.
var traceContext propagation.TraceContext

// mdCarrier reads and writes the trace context in gRPC metadata.
type mdCarrier metadata.MD

func (c mdCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c mdCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c mdCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// traced says whether ctx carries a span context to send with a call.
func traced(ctx context.Context) bool { return trace.SpanContextFromContext(ctx).IsValid() }

// traceContextOf returns ctx's span context as CallRequest.trace_context
// carries it.
func traceContextOf(ctx context.Context) map[string]string {
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	return carrier
}

// withTraceContext returns rpcCtx with ctx's span context in its outgoing
// metadata, or rpcCtx itself when ctx has none: an untraced call sends no
// traceparent, and costs nothing more.
func withTraceContext(ctx, rpcCtx context.Context) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return rpcCtx
	}
	md := metadata.MD{}
	traceContext.Inject(ctx, mdCarrier(md))
	return metadata.NewOutgoingContext(rpcCtx, md)
}

// pluginTracing is the plugin's side: the tracer the OTEL_* environment
// it inherited from the host configures, or nil when that leaves tracing
// off.
type pluginTracing struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
}

// startTracing sets up the plugin's exporter. A setting it cannot honour
// is reported and leaves tracing off: the host, which reads the same
// environment, has refused to start over it already, unless an embedding
// host chose to give the plugin an environment of its own.
func startTracing() *pluginTracing {
	tp, err := otelenv.New(context.Background(), filepath.Base(os.Args[0]))
	if err != nil {
		os.Stderr.WriteString("toolc plugin: tracing is off: " + err.Error() + "\n")
		return nil
	}
	if tp == nil {
		return nil
	}
	// The process is the plugin's: handlers that make spans of their own
	// with otel.Tracer, or call out through instrumented clients, join
	// the call's trace.
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(traceContext)
	return &pluginTracing{tracer: tp.Tracer("github.com/toolc/toolc/plugins"), provider: tp}
}

// stop sends the spans still buffered, within the time the host gives a
// plugin to exit once it asked it to (go-plugin's two seconds).
func (t *pluginTracing) stop() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	t.provider.Shutdown(ctx)
}

// startCall reads the host's trace context from the call's metadata, or
// from the request (carried, from a host of version 7), and, when tracing
// is on, starts the span of the handler, its child. A call without one (a
// host that does not trace) gets no span. With tracing off the host's
// span context still reaches the handler's context, for a handler that
// traces by itself.
func (t *pluginTracing) startCall(ctx context.Context, tool, callID string, carried map[string]string) (context.Context, trace.Span) {
	var carrier propagation.TextMapCarrier
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("traceparent")) > 0 {
		carrier = mdCarrier(md)
	} else if carried["traceparent"] != "" {
		carrier = propagation.MapCarrier(carried)
	} else {
		return ctx, nil
	}
	ctx = traceContext.Extract(ctx, carrier)
	if t == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	ctx, span := t.tracer.Start(ctx, "execute_tool "+tool, trace.WithSpanKind(trace.SpanKindServer))
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", tool),
			attribute.String("gen_ai.tool.call.id", callID))
	}
	return ctx, span
}

// endCall ends the handler's span with how the call ended.
func endCall(span trace.Span, res *plugins.Result, err error) {
	if span == nil {
		return
	}
	switch {
	case err != nil:
		span.SetAttributes(attribute.String("error.type", "cancelled"))
		span.SetStatus(codes.Error, err.Error())
	case res != nil && res.IsError:
		msg := ""
		if len(res.Content) > 0 {
			msg = res.Content[0].Text
		}
		span.SetAttributes(attribute.String("error.type", "tool_error"))
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}
