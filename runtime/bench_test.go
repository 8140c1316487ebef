package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// benchText is the payload of the call benchmarks: 1 KiB of text, as in
// the plugins package's BenchmarkRawGoPlugin, so that the two compare.
var (
	benchText = strings.Repeat("x", 1024)
	benchArgs = json.RawMessage(`{"text":"` + benchText + `"}`)
)

// BenchmarkCallPlugin is runtime.Call through the faulty plugin's echo:
// validation with the default applied, dispatch over go-plugin, the SDK's
// decode and JSON result, and the check of the result against the
// response fields.
func BenchmarkCallPlugin(b *testing.B) {
	rt := newRuntime(b, runtime.Options{}, startFaulty(b))
	ctx := context.Background()
	for b.Loop() {
		res, err := rt.Call(ctx, "echo", benchArgs)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// echoHandler is the faulty plugin's echo, for in-process calls.
func echoHandler() plugins.Handler {
	return plugins.Handle("echo", func(_ context.Context, req struct {
		Text  string `json:"text"`
		Times *int   `json:"times"`
	}) (*plugins.Result, error) {
		if req.Times == nil {
			return plugins.Errorf("times is missing: the runtime did not apply its default"), nil
		}
		return plugins.JSON(map[string]any{"echo": strings.Repeat(req.Text, *req.Times), "times": *req.Times})
	})
}

// BenchmarkCallLocal is runtime.Call of the same echo in-process; its
// difference from BenchmarkHandlerDirect is the runtime's own cost.
func BenchmarkCallLocal(b *testing.B) {
	setup(b)
	cat, err := fixture.cat.Select("echo")
	if err != nil {
		b.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": runtime.Local(echoHandler())}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		res, err := rt.Call(ctx, "echo", benchArgs)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkHandlerDirect calls the echo handler itself, with the
// arguments as the runtime passes them (the default applied): the
// baseline of BenchmarkCallLocal.
func BenchmarkHandlerDirect(b *testing.B) {
	h := echoHandler()
	args := json.RawMessage(`{"text":"` + benchText + `","times":1}`)
	ctx := context.Background()
	for b.Loop() {
		res, err := h.Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkMCPHTTP is tools/call of the plugin's echo over Streamable
// HTTP, from 1, 8 and 64 go-sdk client sessions at once, each calling in
// a loop; calls/s is the throughput of all of them together.
func BenchmarkMCPHTTP(b *testing.B) {
	rt := newRuntime(b, runtime.Options{}, startFaulty(b))
	ts := serveHTTP(b, rt, runtime.HTTPOptions{})
	name := mcpName(b, "echo")
	for _, clients := range []int{1, 8, 64} {
		b.Run(map[int]string{1: "clients=1", 8: "clients=8", 64: "clients=64"}[clients], func(b *testing.B) {
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = connectMCP(b, ts.URL).session
			}
			params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(benchArgs)}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for _, s := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						res, err := s.CallTool(context.Background(), params)
						if err != nil || res.IsError {
							b.Error(res, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkPluginDispatch is the faulty plugin's echo through the
// dispatcher alone, with the arguments as validation leaves them: the SDK
// on both sides and go-plugin, without the runtime's checks. Its
// difference from BenchmarkCallPlugin is the runtime's cost.
func BenchmarkPluginDispatch(b *testing.B) {
	p := startFaulty(b)
	args := json.RawMessage(`{"text":"` + benchText + `","times":1}`)
	ctx := context.Background()
	for b.Loop() {
		res, err := p.Call(ctx, "echo", "bench", args, nil)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}
