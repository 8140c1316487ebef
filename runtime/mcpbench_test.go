package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// BenchmarkMCPRevisions is tools/call of say (1 KiB of text in, the same
// text out) over Streamable HTTP from 1, 8 and 64 go-sdk clients at once,
// at 2026-07-28 (no session, each call a request of its own) and at
// 2025-11-25 (a session per client), against three servers built the same
// way, side by side in one run:
//
//   - ref: the go-sdk reference, an mcp.Server with the tool in process,
//     behind go-sdk's StreamableHTTPHandler in the mode the revision needs
//     (stateless for 2026-07-28, sessions for 2025-11-25);
//   - local: toolc's runtime.NewHTTPHandler with the handler in process;
//   - plugin: the same with the handler in the faulty plugin, as toolc
//     serve runs it.
//
// local against ref is what toolc adds besides the process boundary;
// plugin against local is the boundary. The sub-benchmarks run in the
// order clients, revision, server, so that each trio is measured at one
// moment of the machine's load; run it with -count for rounds.
func BenchmarkMCPRevisions(b *testing.B) {
	setup(b)
	servers := []struct {
		name string
		url  string
	}{
		{"ref", refMCPServer(b)},
		{"local", toolcMCPServer(b, runtime.Local(sayHandler()))},
		{"plugin", toolcMCPServer(b, startFaulty(b))},
	}
	for _, clients := range []int{1, 8, 64} {
		for _, rev := range revisions {
			for _, srv := range servers {
				b.Run(fmt.Sprintf("clients=%d/rev=%s/server=%s", clients, rev, srv.name), func(b *testing.B) {
					benchMCPCalls(b, srv.url, rev, clients)
				})
			}
		}
	}
}

// sayHandler is the faulty plugin's say, in process.
func sayHandler() plugins.Handler {
	return plugins.Handle("say", func(_ context.Context, req struct {
		Text string `json:"text"`
	}) (*plugins.Result, error) {
		return plugins.Text(req.Text), nil
	})
}

// toolcMCPServer serves the faulty service's say through d, as toolc serve
// does.
func toolcMCPServer(b *testing.B, d runtime.Dispatcher) string {
	setup(b)
	cat, err := fixture.cat.Select("say")
	if err != nil {
		b.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": d}); err != nil {
		b.Fatal(err)
	}
	return serveHTTP(b, rt, runtime.HTTPOptions{}).URL + "/mcp"
}

// refMCPServer serves say from a plain go-sdk server, with the tool's MCP
// name and input schema, routing by revision as go-sdk's own two modes
// require.
func refMCPServer(b *testing.B) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        mcpName(b, "say"),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
	})
	get := func(*http.Request) *mcp.Server { return srv }
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	sessions := mcp.NewStreamableHTTPHandler(get, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
		} else {
			sessions.ServeHTTP(w, r)
		}
	}))
	b.Cleanup(ts.Close)
	return ts.URL
}

// benchMCPCalls calls say from clients sessions at once, and reports the
// throughput and the median and 99th percentile of a call's latency.
func benchMCPCalls(b *testing.B, url, rev string, clients int) {
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		sessions[i] = s
	}
	params := &mcp.CallToolParams{Name: mcpName(b, "say"), Arguments: benchArgs}
	latencies := make([][]time.Duration, clients)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				res, err := s.CallTool(context.Background(), params)
				latencies[i] = append(latencies[i], time.Since(start))
				if err != nil || res.IsError {
					b.Error(res, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(0, "ns/op")
}
