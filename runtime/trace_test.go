package runtime_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/otlptest"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// traceparent is a W3C traceparent of a fresh, sampled trace, and its
// trace and span IDs.
type traceparent struct{ header, traceID, spanID string }

func newTraceparent(t testing.TB) traceparent {
	t.Helper()
	var id [24]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	tp := traceparent{traceID: hex.EncodeToString(id[:16]), spanID: hex.EncodeToString(id[16:])}
	tp.header = fmt.Sprintf("00-%s-%s-01", tp.traceID, tp.spanID)
	return tp
}

// recordSpans returns a tracer provider that records every span as it
// ends, in memory (the SDK's tracetest).
func recordSpans(t testing.TB) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, rec
}

// onlySpan returns the one span recorded since the last call, which is
// ended: a call's span ends before its answer is written.
func onlySpan(t testing.TB, rec *tracetest.SpanRecorder, seen *int) sdktrace.ReadOnlySpan {
	t.Helper()
	// The answer can reach the client a moment before End returns.
	for deadline := time.Now().Add(2 * time.Second); len(rec.Ended()) <= *seen && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	ended := rec.Ended()
	if len(ended) != *seen+1 {
		t.Fatalf("%d spans ended, want 1: %v", len(ended)-*seen, spanNames(ended[*seen:]))
	}
	*seen = len(ended)
	return ended[len(ended)-1]
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

func attrsOf(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

// wantSpan checks a call's server span: its name, that it is the child of
// the traceparent the client sent (or a root without one), and its
// attributes (an empty value: the attribute must be there, with any
// value; one starting with "!": must be absent).
func wantSpan(t testing.TB, s sdktrace.ReadOnlySpan, name string, kind trace.SpanKind, parent *traceparent, attrs map[attribute.Key]string) {
	t.Helper()
	if s.Name() != name || s.SpanKind() != kind {
		t.Errorf("span %q of kind %v, want %q of kind %v", s.Name(), s.SpanKind(), name, kind)
	}
	switch {
	case parent == nil && s.Parent().IsValid():
		t.Errorf("span %q has parent %s, want a root", s.Name(), s.Parent().SpanID())
	case parent != nil && (s.Parent().SpanID().String() != parent.spanID || s.SpanContext().TraceID().String() != parent.traceID || !s.Parent().IsRemote()):
		t.Errorf("span %q is in trace %s with parent %s (remote %t), want the child of the client's %s in %s",
			s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID(), s.Parent().IsRemote(), parent.spanID, parent.traceID)
	}
	got := attrsOf(s)
	for k, want := range attrs {
		v, ok := got[k]
		switch {
		case len(want) > 0 && want[0] == '!':
			if ok {
				t.Errorf("span %q has %s=%q, want none", s.Name(), k, v)
			}
		case !ok:
			t.Errorf("span %q lacks %s (has %v)", s.Name(), k, got)
		case want != "" && v != want:
			t.Errorf("span %q has %s=%q, want %q", s.Name(), k, v, want)
		}
	}
	et, isError := attrs["error.type"]
	isError = isError && (et == "" || et[0] != '!')
	if (s.Status().Code == codes.Error) != isError {
		t.Errorf("span %q has status %v %q, want an error status %t", s.Name(), s.Status().Code, s.Status().Description, isError)
	}
}

// TestTraceHTTPCall: /v1/call makes one server span per call, the child of
// the client's traceparent, named after the tool and saying how it ended.
func TestTraceHTTPCall(t *testing.T) {
	tp, rec := recordSpans(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{TracerProvider: tp, CallTimeout: 300 * time.Millisecond}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	seen := 0
	for _, tc := range []struct {
		name, body string
		status     int
		span       string
		attrs      map[attribute.Key]string
	}{
		{"ok in process", `{"name": "add", "arguments": {"a": 1, "b": 2}}`, 200, "execute_tool add", map[attribute.Key]string{
			"gen_ai.tool.name": "add", "gen_ai.operation.name": "execute_tool", "toolc.service": "inproc", "toolc.tool": "add",
			"toolc.outcome": "ok", "gen_ai.tool.call.id": "", "error.type": "!", "mcp.method.name": "!"}},
		{"ok in the plugin", `{"name": "echo", "arguments": {"text": "hi"}}`, 200, "execute_tool echo", map[attribute.Key]string{
			"gen_ai.tool.name": "echo", "toolc.service": "faulty", "toolc.outcome": "ok"}},
		{"invalid arguments", `{"name": "add", "arguments": {"a": "one"}}`, 200, "execute_tool add", map[attribute.Key]string{
			"toolc.outcome": "tool_error", "error.type": "tool_error", "toolc.error.kind": "invalid_arguments", "toolc.service": "inproc"}},
		{"handler error", `{"name": "panic"}`, 200, "execute_tool panic", map[attribute.Key]string{
			"toolc.outcome": "tool_error", "error.type": "tool_error", "toolc.error.kind": "handler"}},
		{"timeout", `{"name": "sleep", "arguments": {"ms": 5000}}`, 200, "execute_tool sleep", map[attribute.Key]string{
			"toolc.outcome": "timeout", "error.type": "tool_error", "toolc.error.kind": "timeout"}},
		// An unknown name is not the span's: its name has no target.
		{"unknown tool", `{"name": "no_such_tool"}`, 404, "execute_tool", map[attribute.Key]string{
			"toolc.outcome": "protocol_error", "error.type": "404", "http.response.status_code": "404", "gen_ai.tool.name": "!"}},
		{"bad body", `{"name": `, 400, "execute_tool", map[attribute.Key]string{
			"toolc.outcome": "protocol_error", "error.type": "400"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := newTraceparent(t)
			r := runtimetest.Do(t, "POST", ts.URL+"/v1/call", tc.body, map[string]string{"traceparent": parent.header})
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			wantSpan(t, onlySpan(t, rec, &seen), tc.span, trace.SpanKindServer, &parent, tc.attrs)
		})
	}

	// Without a traceparent, or with one that is not W3C's, the call
	// starts a trace.
	for _, header := range []map[string]string{nil, {"traceparent": "00-not-a-trace-01"}, {"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}} {
		runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "add", "arguments": {"a": 1, "b": 2}}`, header)
		wantSpan(t, onlySpan(t, rec, &seen), "execute_tool add", trace.SpanKindServer, nil, map[attribute.Key]string{"toolc.outcome": "ok"})
	}

	// A direct Call, as toolc call and an embedding service make, has a
	// span of its own, the child of the caller's.
	parent := newTraceparent(t)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: runtimetest.Must(trace.TraceIDFromHex(parent.traceID)), SpanID: runtimetest.Must(trace.SpanIDFromHex(parent.spanID)), TraceFlags: trace.FlagsSampled, Remote: true})
	if _, err := rt.Call(trace.ContextWithRemoteSpanContext(context.Background(), sc), "add", []byte(`{"a": 1, "b": 2}`)); err != nil {
		t.Fatal(err)
	}
	wantSpan(t, onlySpan(t, rec, &seen), "execute_tool add", trace.SpanKindInternal, &parent, map[attribute.Key]string{"toolc.outcome": "ok", "toolc.service": "inproc"})
}

// headerTransport sets a header on every request.
type headerTransport struct {
	header *string
	next   http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if *h.header != "" {
		req = req.Clone(req.Context())
		req.Header.Set("traceparent", *h.header)
	}
	return h.next.RoundTrip(req)
}

// TestTraceMCP: a tools/call of either revision has a server span named and
// attributed as the MCP semantic conventions say, the child of the
// traceparent in params._meta (SEP-414) or, without one, of the HTTP
// request's.
func TestTraceMCP(t *testing.T) {
	tp, rec := recordSpans(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{TracerProvider: tp}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	add := runtimetest.MCPName(t, "add")
	for _, rev := range runtimetest.Revisions {
		t.Run(rev, func(t *testing.T) {
			var header string
			client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			transport := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1,
				HTTPClient: &http.Client{Transport: headerTransport{&header, http.DefaultTransport}}}
			session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			// The handshake and tools/list make no span: only calls do.
			seen := len(rec.Ended())
			session.ListTools(ctx, nil)

			inHeader := newTraceparent(t)
			header = inHeader.header
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: add, Arguments: map[string]int{"a": 1, "b": 2}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			session_ := "!"
			if rev < "2026-07-28" {
				session_ = session.ID()
			}
			s := onlySpan(t, rec, &seen)
			wantSpan(t, s, "tools/call "+add, trace.SpanKindServer, &inHeader, map[attribute.Key]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": add, "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": rev, "mcp.session.id": session_, "network.transport": "tcp",
				"toolc.service": "inproc", "toolc.tool": "add", "toolc.outcome": "ok", "error.type": "!"})

			// params._meta's traceparent is the parent; the header's is
			// linked.
			inMeta := newTraceparent(t)
			header = newTraceparent(t).header
			if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: add, Arguments: map[string]int{"a": 1, "b": 2}, Meta: mcp.Meta{"traceparent": inMeta.header}}); err != nil {
				t.Fatal(err)
			}
			s = onlySpan(t, rec, &seen)
			wantSpan(t, s, "tools/call "+add, trace.SpanKindServer, &inMeta, map[attribute.Key]string{"toolc.outcome": "ok"})
			if l := s.Links(); len(l) != 1 || l[0].SpanContext.SpanID().String() != header[36:52] {
				t.Errorf("links %+v, want the header's %s", l, header)
			}

			// A tool error, and a JSON-RPC error for an unknown tool.
			header = inHeader.header
			if res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: add, Arguments: map[string]any{"a": "one"}}); err != nil || !res.IsError {
				t.Fatalf("invalid arguments: %v %+v", err, res)
			}
			wantSpan(t, onlySpan(t, rec, &seen), "tools/call "+add, trace.SpanKindServer, &inHeader, map[attribute.Key]string{
				"toolc.outcome": "tool_error", "error.type": "tool_error", "toolc.error.kind": "invalid_arguments"})
			if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Fatal("an unknown tool answered")
			}
			wantSpan(t, onlySpan(t, rec, &seen), "tools/call", trace.SpanKindServer, &inHeader, map[attribute.Key]string{
				"toolc.outcome": "protocol_error", "error.type": "", "rpc.response.status_code": "", "gen_ai.tool.name": "no_such_tool"})
		})
	}
}

// TestTraceMCPStdio: over a pipe (an in-memory transport here, as stdio has
// no HTTP), params._meta carries the trace context.
func TestTraceMCPStdio(t *testing.T) {
	tp, rec := recordSpans(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{TracerProvider: tp}, runtimetest.StartFaulty(t))
	srv := mcpserver.New(rt, mcpserver.Options{})
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	parent := newTraceparent(t)
	seen := len(rec.Ended())
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: map[string]string{"text": "hi"}, Meta: mcp.Meta{"traceparent": parent.header}}); err != nil {
		t.Fatal(err)
	}
	wantSpan(t, onlySpan(t, rec, &seen), "tools/call "+runtimetest.MCPName(t, "echo"), trace.SpanKindServer, &parent, map[attribute.Key]string{
		"network.transport": "pipe", "toolc.service": "faulty", "toolc.outcome": "ok"})
}

// TestTraceAcrossPlugin: the handler's span in the plugin process is the
// child of the server's span: the trace context crosses the gRPC boundary
// of a real plugin binary, which exports its span over OTLP, as the
// environment it inherits says, to a receiver the test runs. The server's
// span is the child of the client's traceparent.
func TestTraceAcrossPlugin(t *testing.T) {
	recv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	// Batches wait ten minutes: the span arrives only because the plugin
	// sends what it buffered when the host stops it.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")
	tp, rec := recordSpans(t)
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{TracerProvider: tp}, p)
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})

	parent := newTraceparent(t)
	seen := len(rec.Ended())
	res := runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "trace_context"}`, map[string]string{"traceparent": parent.header}))
	server := onlySpan(t, rec, &seen)
	wantSpan(t, server, "execute_tool trace_context", trace.SpanKindServer, &parent, map[attribute.Key]string{"toolc.service": "faulty", "toolc.outcome": "ok"})
	if res.StructuredContent["trace_id"] != parent.traceID || res.StructuredContent["span_id"] == "" {
		t.Fatalf("the handler saw trace context %v, want a span in trace %s", res.StructuredContent, parent.traceID)
	}
	if n := recv.Requests(); n != 0 {
		t.Fatalf("the plugin exported %d batches before it stopped, with a batch delay of ten minutes", n)
	}

	p.Close(5 * time.Second)
	ps := recv.WaitFor(t, 10*time.Second, "plugin", func(s otlptest.Span) bool { return s.Name == "execute_tool trace_context" })
	if ps.TraceID != parent.traceID || ps.ParentSpanID != server.SpanContext().SpanID().String() {
		t.Errorf("the plugin's span is in trace %s with parent %s, want the child of the server's span %s in %s",
			ps.TraceID, ps.ParentSpanID, server.SpanContext().SpanID(), parent.traceID)
	}
	if ps.SpanID != res.StructuredContent["span_id"] {
		t.Errorf("the plugin exported span %s, but the handler ran in %v", ps.SpanID, res.StructuredContent["span_id"])
	}
	if ps.Service != "faulty" {
		t.Errorf("the plugin's spans are of service %q, want its service's name, faulty", ps.Service)
	}
	if id := attrsOf(server)["gen_ai.tool.call.id"]; id == "" || ps.Attrs["gen_ai.tool.call.id"] != id || ps.Attrs["gen_ai.tool.name"] != "trace_context" {
		t.Errorf("the plugin's span has attributes %v, want the call ID %q of the server's", ps.Attrs, id)
	}
}

// TestTraceOff: a runtime without a tracer provider reads no trace context
// and passes none on: a plugin that would export gets no traceparent, so
// that it makes no span and exports nothing.
func TestTraceOff(t *testing.T) {
	recv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "1")
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	parent := newTraceparent(t)
	res := runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "trace_context"}`, map[string]string{"traceparent": parent.header}))
	if res.StructuredContent["trace_id"] != "" {
		t.Errorf("/v1/call: the handler saw trace context %v with tracing off", res.StructuredContent)
	}
	c := runtimetest.ConnectMCP(t, ts.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mres, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "trace_context"), Meta: mcp.Meta{"traceparent": parent.header}})
	if err != nil {
		t.Fatal(err)
	}
	if got := mres.StructuredContent.(map[string]any); got["trace_id"] != "" {
		t.Errorf("MCP: the handler saw trace context %v with tracing off", got)
	}
	p.Close(5 * time.Second)
	if n := recv.Requests(); n != 0 {
		t.Errorf("%d batches of spans were exported with tracing off: %+v", n, recv.Spans())
	}
}

// TestTraceOAuthCaller: with OAuth, a call's span names the caller (the
// token's subject and client), and a refusal for want of scopes is a
// protocol error, over /v1/call and MCP alike.
func TestTraceOAuthCaller(t *testing.T) {
	tp, rec := recordSpans(t)
	url, iss, _ := runtimetest.GuardedServer(t, runtime.Options{TracerProvider: tp})
	token := iss.Token(t, jose.RS256, "alice", "notes:use notes:read")
	seen := 0
	parent := newTraceparent(t)
	r := runtimetest.Do(t, "POST", url+"/v1/call", `{"name": "read_note", "arguments": {"id": "n1"}}`, map[string]string{"Authorization": "Bearer " + token, "traceparent": parent.header})
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	wantSpan(t, onlySpan(t, rec, &seen), "execute_tool read_note", trace.SpanKindServer, &parent, map[attribute.Key]string{
		"enduser.id": "alice", "toolc.caller.client_id": "test-client", "toolc.outcome": "ok"})
	r = runtimetest.Do(t, "POST", url+"/v1/call", `{"name": "write_note", "arguments": {"id": "n1"}}`, map[string]string{"Authorization": "Bearer " + token, "traceparent": parent.header})
	if r.Status != 403 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	wantSpan(t, onlySpan(t, rec, &seen), "execute_tool write_note", trace.SpanKindServer, &parent, map[attribute.Key]string{
		"enduser.id": "alice", "toolc.outcome": "protocol_error", "error.type": "403"})

	s := runtimetest.MCPSession(t, url, token)
	seen = len(rec.Ended())
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_write_note", Arguments: map[string]any{"id": "n1"}, Meta: mcp.Meta{"traceparent": parent.header}}); err == nil {
		t.Fatal("a call without the scope answered")
	}
	wantSpan(t, onlySpan(t, rec, &seen), "tools/call guarded_write_note", trace.SpanKindServer, &parent, map[attribute.Key]string{
		"enduser.id": "alice", "toolc.outcome": "protocol_error", "error.type": "403", "mcp.method.name": "tools/call"})
}

// TestTraceNestedCall: a handler that calls another tool with its own
// context makes a second span, the child of its call's, and leaves its
// call's span as it was.
func TestTraceNestedCall(t *testing.T) {
	runtimetest.Setup(t)
	tp, rec := recordSpans(t)
	rt := runtime.New(runtime.Options{TracerProvider: tp})
	cat, err := runtimetest.Setup(t).Catalog.Select("add", "route")
	if err != nil {
		t.Fatal(err)
	}
	route := plugins.Handle("route", func(ctx context.Context, req struct{ Region string }) (*plugins.Result, error) {
		res, err := rt.Call(ctx, "add", []byte(`{"a": 1, "b": 2}`))
		if err != nil || res.IsError {
			return nil, fmt.Errorf("add: %v %v", res, err)
		}
		return plugins.Text("to " + req.Region), nil
	})
	add := plugins.Handle("add", func(_ context.Context, req struct{ A, B int }) (*plugins.Result, error) {
		return plugins.JSON(map[string]int{"sum": req.A + req.B})
	})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"inproc": runtime.Local(add, route)}); err != nil {
		t.Fatal(err)
	}
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	parent := newTraceparent(t)
	if r := runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "route", "arguments": {"region": "eu"}}`, map[string]string{"traceparent": parent.header}); r.Status != 200 || strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	for deadline := time.Now().Add(2 * time.Second); len(rec.Ended()) < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("spans %v, want the nested call's and the call's", spanNames(ended))
	}
	inner, outer := ended[0], ended[1]
	wantSpan(t, outer, "execute_tool route", trace.SpanKindServer, &parent, map[attribute.Key]string{"toolc.tool": "route", "toolc.outcome": "ok"})
	if a := attrsOf(inner); inner.Name() != "execute_tool add" || inner.SpanKind() != trace.SpanKindInternal || a["toolc.tool"] != "add" || a["toolc.outcome"] != "ok" {
		t.Errorf("the nested call's span %q of kind %v has %v", inner.Name(), inner.SpanKind(), a)
	}
	if inner.Parent().SpanID() != outer.SpanContext().SpanID() {
		t.Errorf("the nested call's span has parent %s, want the call's %s", inner.Parent().SpanID(), outer.SpanContext().SpanID())
	}
}

// TestTracePromptsAndResources: prompts/get and resources/read get their
// server spans as tools/call does, named and attributed as the conventions
// have it ("prompts/get NAME" with gen_ai.prompt.name; "resources/read"
// with mcp.resource.uri, which stays out of the name), the child of the
// client's trace context, with the handler that served them and how they
// ended: a template, a handler, a round that asks back, an error.
func TestTracePromptsAndResources(t *testing.T) {
	dir := t.TempDir()
	contract := `package notes

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "notes"
	version:     "1.0.0"
	description: "Notes"
	tools: {}
	prompts: hello: {
		description: "Say hello"
		messages: [{role: "user", text: "Hello"}]
	}
	prompts: welcome: {
		description: "Ask a name, then welcome its owner"
	}
	resources: readme: {uri: "notes://readme", description: "The readme", text: "# Notes"}
	resources: note: {
		uriTemplate: "notes://n/{id}"
		description: "A note"
		mimeType:    "text/markdown"
		variables: id: {type: "string", description: "The note", pattern: "^[0-9]+$"}
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "notes.cue"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	welcome := plugins.HandlePrompt("welcome", func(ctx context.Context, _ struct{}) ([]plugins.PromptMessage, error) {
		r, err := plugins.Elicit(ctx, "name", plugins.Form{Message: "Your name?", Schema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		var v struct{ Name string }
		_ = r.Decode(&v)
		return []plugins.PromptMessage{{Role: "user", Content: plugins.TextContent("Welcome " + v.Name)}}, nil
	})
	note := plugins.HandleResource("note", func(ctx context.Context, req plugins.ResourceRequest[struct{ ID string }]) ([]plugins.ResourceContents, error) {
		if req.Variables.ID == "8" {
			return nil, errors.New("note 8 is locked")
		}
		return []plugins.ResourceContents{{Text: "# Note " + req.Variables.ID}}, nil
	})
	tp, rec := recordSpans(t)
	rt := runtime.New(runtime.Options{TracerProvider: tp})
	srv := mcpserver.New(rt, mcpserver.Options{ContentDir: dir})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"notes": runtime.Local(welcome, note)}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(rt, srv, mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)

	for _, rev := range runtimetest.Revisions {
		t.Run(rev, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			seen := len(rec.Ended())
			session_ := "!"
			if rev < "2026-07-28" {
				session_ = session.ID()
			}

			parent := newTraceparent(t)
			meta := mcp.Meta{"traceparent": parent.header}
			if _, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello", Meta: meta}); err != nil {
				t.Fatal(err)
			}
			wantSpan(t, onlySpan(t, rec, &seen), "prompts/get hello", trace.SpanKindServer, &parent, map[attribute.Key]string{
				"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "hello", "gen_ai.operation.name": "!", "gen_ai.tool.name": "!",
				"mcp.protocol.version": rev, "mcp.session.id": session_, "network.transport": "tcp",
				"toolc.tool": "!", "toolc.outcome": "ok", "error.type": "!"})

			// A handler's prompt: at 2026-07-28 one span per round, the
			// first ending with the question.
			if _, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "welcome", Meta: meta}); err != nil {
				t.Fatal(err)
			}
			if rev >= "2026-07-28" {
				// go-sdk's client sends the second round before GetPrompt
				// returns: the first span has ended by then.
				seen++
				wantSpan(t, rec.Ended()[seen-1], "prompts/get welcome", trace.SpanKindServer, &parent, map[attribute.Key]string{
					"toolc.service": "notes", "toolc.tool": "prompt:welcome", "toolc.outcome": "input_required", "error.type": "!"})
			}
			wantSpan(t, onlySpan(t, rec, &seen), "prompts/get welcome", trace.SpanKindServer, &parent, map[attribute.Key]string{
				"toolc.service": "notes", "toolc.tool": "prompt:welcome", "toolc.outcome": "ok", "error.type": "!"})

			// An unknown prompt does not name the span.
			if _, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no_such_prompt", Meta: meta}); err == nil {
				t.Fatal("an unknown prompt answered")
			}
			wantSpan(t, onlySpan(t, rec, &seen), "prompts/get", trace.SpanKindServer, &parent, map[attribute.Key]string{
				"gen_ai.prompt.name": "no_such_prompt", "toolc.outcome": "protocol_error", "error.type": "-32602", "rpc.response.status_code": "-32602"})

			if _, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://readme", Meta: meta}); err != nil {
				t.Fatal(err)
			}
			wantSpan(t, onlySpan(t, rec, &seen), "resources/read", trace.SpanKindServer, &parent, map[attribute.Key]string{
				"mcp.method.name": "resources/read", "mcp.resource.uri": "notes://readme", "gen_ai.operation.name": "!",
				"mcp.session.id": session_, "toolc.tool": "!", "toolc.outcome": "ok", "error.type": "!"})
			if _, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://n/7", Meta: meta}); err != nil {
				t.Fatal(err)
			}
			wantSpan(t, onlySpan(t, rec, &seen), "resources/read", trace.SpanKindServer, &parent, map[attribute.Key]string{
				"mcp.resource.uri": "notes://n/7", "toolc.service": "notes", "toolc.tool": "resource:note", "toolc.outcome": "ok", "error.type": "!"})
			if _, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://n/8", Meta: meta}); err == nil {
				t.Fatal("a locked note was read")
			}
			wantSpan(t, onlySpan(t, rec, &seen), "resources/read", trace.SpanKindServer, &parent, map[attribute.Key]string{
				"mcp.resource.uri": "notes://n/8", "toolc.tool": "resource:note", "toolc.outcome": "protocol_error", "error.type": "-32603"})
		})
	}
}
