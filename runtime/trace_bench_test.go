package runtime_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/otelenv"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/runtime"
)

// BenchmarkCallTracing compares a call with tracing off (no tracer
// provider: the default) and on (toolc's own set-up from the OTEL_*
// environment, batching to an OTLP/HTTP endpoint on loopback that reads
// and drops what it is sent), each way a call arrives:
//
//   - local: runtime.Call of an in-process echo (1 byte);
//   - http: POST /v1/call of the same, with a traceparent header;
//   - plugin: runtime.Call of the faulty plugin's say (1 KiB), where "on"
//     also has the plugin export its span of the handler.
//
// Run with -count so that the pairs interleave on a loaded machine.
func BenchmarkCallTracing(b *testing.B) {
	runtimetest.Setup(b)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(collector.Close)

	cat, err := runtimetest.Setup(b).Catalog.Select("echo", "say")
	if err != nil {
		b.Fatal(err)
	}
	offPlugin := runtimetest.StartFaulty(b)
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	onPlugin := runtimetest.StartFaulty(b)
	tp, err := otelenv.New(context.Background(), "toolc")
	if err != nil || tp == nil {
		b.Fatal(tp, err)
	}
	b.Cleanup(func() { tp.Shutdown(context.Background()) })

	runtimes := map[string]*runtime.Runtime{}
	for mode, opts := range map[string]runtime.Options{"off": {}, "on": {TracerProvider: tp}} {
		p := offPlugin
		if mode == "on" {
			p = onPlugin
		}
		rt := runtime.New(opts)
		// echo in process, say in the plugin: the faulty service has
		// both, and a dispatcher serves the tools it is given.
		if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": split{local: runtime.Local(echoHandler()), plugin: p}}); err != nil {
			b.Fatal(err)
		}
		runtimes[mode] = rt
	}
	urls := map[string]string{"off": runtimetest.ServeHTTP(b, runtimes["off"], httpapi.Options{}).URL, "on": runtimetest.ServeHTTP(b, runtimes["on"], httpapi.Options{}).URL}

	local := json.RawMessage(`{"text":"x"}`)
	for _, mode := range []string{"off", "on"} {
		b.Run("local/tracing="+mode, func(b *testing.B) {
			rt := runtimes[mode]
			// The calling thread's CPU time too: the span's cost to the
			// call itself, without the batch exporter's, which runs on
			// another thread, and without the wait for a loaded CPU.
			m := startThreadCPU()
			for b.Loop() {
				if res, err := rt.Call(context.Background(), "echo", local); err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
			m.report(b)
		})
	}
	for _, mode := range []string{"off", "on"} {
		b.Run("http/tracing="+mode, func(b *testing.B) {
			client := &http.Client{}
			tp := newTraceparent(b)
			for b.Loop() {
				req, _ := http.NewRequest("POST", urls[mode]+"/v1/call", strings.NewReader(`{"name": "echo", "arguments": {"text": "x"}}`))
				req.Header.Set("traceparent", tp.header)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
	for _, mode := range []string{"off", "on"} {
		b.Run("plugin/tracing="+mode, func(b *testing.B) {
			rt := runtimes[mode]
			for b.Loop() {
				callOK(b, rt, textTool)
			}
		})
	}
}

// split dispatches echo in process and the rest to a plugin.
type split struct{ local, plugin runtime.Dispatcher }

func (s split) Tools() []string { return []string{"echo", "say"} }

func (s split) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(runtime.Event)) (*runtime.Result, error) {
	if tool == "echo" {
		return s.local.Call(ctx, tool, callID, args, onEvent)
	}
	return s.plugin.Call(ctx, tool, callID, args, onEvent)
}
