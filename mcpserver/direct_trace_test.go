package mcpserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolc/toolc/runtime"
)

// spanLines are the spans rec has ended since the last call, one line
// each, without what differs from one call to the next (IDs other than a
// remote parent's, the call's ID, times): their names, kinds, parents, statuses,
// attributes, events and links.
func spanLines(rec *tracetest.SpanRecorder, seen *int) []string {
	ended := rec.Ended()
	var lines []string
	for _, s := range ended[*seen:] {
		var attrs []string
		for _, a := range s.Attributes() {
			v := a.Value.Emit()
			if a.Key == "gen_ai.tool.call.id" {
				v = "…" // the runtime's count of calls
			}
			attrs = append(attrs, string(a.Key)+"="+v)
		}
		slices.Sort(attrs)
		var events []string
		for _, e := range s.Events() {
			events = append(events, e.Name)
		}
		parent := "none"
		if p := s.Parent(); p.IsValid() {
			parent = p.SpanID().String()
			if !p.IsRemote() {
				parent = "local"
			}
		}
		lines = append(lines, fmt.Sprintf("%s %v parent=%s status=%v %q attrs=%s events=%v links=%d",
			s.Name(), s.SpanKind(), parent, s.Status().Code, s.Status().Description, strings.Join(attrs, " "), events, len(s.Links())))
	}
	*seen = len(ended)
	return lines
}

// tracedRuntime is a runtime of the direct path's catalog, with its spans
// recorded in rec.
func tracedRuntime(t testing.TB, rec *tracetest.SpanRecorder) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(runtime.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestDirectPathTraced: with tracing, the direct path answers the calls
// it answers without tracing, each in the span that go-sdk's path records
// (traceCalls): the same name, parent, status, attributes and events.
func TestDirectPathTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	rt := tracedRuntime(t, rec)
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	direct, e := newHTTPHandler(rt, srv, HTTPOptions{})
	sdk := NewHTTPHandler(rt, srv, HTTPOptions{noDirect: true})
	seen := 0
	parent := func(h http.Header) http.Header {
		h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		return h
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
	}{
		{"call", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{"text":"a"}`, plainMeta2026)},
		{"call, a parent in the header", parent(modernHeader("tools/call", "d_echo")), callOf("2", "d_echo", `{}`, plainMeta2026)},
		{"call, the handler's error", modernHeader("tools/call", "d_fail"), callOf("3", "d_fail", `{}`, plainMeta2026)},
		{"call, invalid arguments", modernHeader("tools/call", "d_echo"), callOf("4", "d_echo", `{"n":"x"}`, plainMeta2026)},
		{"call, questions", modernHeader("tools/call", "d_ask"), callOf("5", "d_ask", `{}`, metaWithCapabilities(`{"elicitation":{}}`))},
		{"call, missing capability", modernHeader("tools/call", "d_missing"), callOf("6", "d_missing", `{}`, plainMeta2026)},
		{"call, rich", modernHeader("tools/call", "d_rich"), callOf("7", "d_rich", `{}`, plainMeta2026)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.direct.answered.Load()
			got := normal(send(direct, tc.header, tc.body))
			if e.direct.answered.Load() == before {
				t.Fatal("the direct path did not answer")
			}
			gotSpans := spanLines(rec, &seen)
			want := normal(send(sdk, tc.header, tc.body))
			wantSpans := spanLines(rec, &seen)
			if got.status != want.status || got.body != want.body {
				t.Fatalf("direct path: %d %q\ngo-sdk: %d %q", got.status, got.body, want.status, want.body)
			}
			if len(wantSpans) == 0 || !slices.Equal(gotSpans, wantSpans) {
				t.Fatalf("spans\ndirect path: %s\ngo-sdk:      %s", strings.Join(gotSpans, "\n             "), strings.Join(wantSpans, "\n             "))
			}
		})
	}
}

// TestStdioDirectTraced: with tracing, the stdio path answers the calls it
// answers without it, each in the span that go-sdk's path records.
func TestStdioDirectTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	rt := runtime.New(runtime.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	d := &stdioScripted{}
	if _, err := rt.Swap(stdioCatalog(), map[string]runtime.Dispatcher{"d": d, "u": mirror{}}); err != nil {
		t.Fatal(err)
	}
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	seen := 0
	for _, tc := range []struct {
		name  string
		steps []stdioStep
	}{
		{"2025-11-25", seq([]stdioStep{call("0", legacyInit), {initedNote, nil}}, plainLegacyCalls)},
		{"2026-07-28", []stdioStep{call("1", modernCall("1", "d_echo", `{"text":"a"}`)), call("2", modernCall("2", "d_fail", `{}`))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, answered := stdioRun(t, rt, srv, d, tc.steps, true, StdioEOFWait)
			gotSpans := spanLines(rec, &seen)
			want, _ := stdioRun(t, rt, srv, d, tc.steps, false, StdioEOFWait)
			wantSpans := spanLines(rec, &seen)
			if answered == 0 {
				t.Fatal("the stdio path answered no call")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("the stdio path wrote:\n%s\ngo-sdk wrote:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			slices.Sort(gotSpans)
			slices.Sort(wantSpans)
			if len(wantSpans) == 0 || !slices.Equal(gotSpans, wantSpans) {
				t.Fatalf("spans\nstdio path: %s\ngo-sdk:     %s", strings.Join(gotSpans, "\n            "), strings.Join(wantSpans, "\n            "))
			}
		})
	}
}

// BenchmarkDirectPathTraced is a 2026-07-28 tools/call with tracing on,
// in process, on the direct path and on go-sdk's: the handler alone,
// without the network, with a span per call (recorded, not exported).
func BenchmarkDirectPathTraced(b *testing.B) {
	rt := runtime.New(runtime.Options{TracerProvider: sdktrace.NewTracerProvider()})
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		b.Fatal(err)
	}
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	direct, _ := newHTTPHandler(rt, srv, HTTPOptions{})
	sdk := NewHTTPHandler(rt, srv, HTTPOptions{noDirect: true})
	header := modernHeader("tools/call", "d_echo")
	header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	body := callOf("1", "d_echo", `{"text":"a"}`, metaWithCapabilities(`{"roots":{"listChanged":true}}`))
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"toolc", direct}, {"go-sdk", sdk}} {
		b.Run("path="+h.name, func(b *testing.B) { benchSend(b, h.h, header, body) })
	}
}
