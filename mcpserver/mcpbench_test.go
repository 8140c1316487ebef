package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
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
//   - local: toolc's httpapi.NewHandler with the handler in process;
//   - plugin: the same with the handler in the faulty plugin, as toolc
//     serve runs it.
//
// local against ref is what toolc adds besides the process boundary;
// plugin against local is the boundary. The sub-benchmarks run in the
// order clients, revision, server, so that each trio is measured at one
// moment of the machine's load; run it with -count for rounds.
func BenchmarkMCPRevisions(b *testing.B) {
	runtimetest.Setup(b)
	servers := []struct {
		name string
		url  string
	}{
		{"ref", refMCPServer(b)},
		{"local", toolcMCPServer(b, runtime.Local(sayHandler()))},
		{"plugin", toolcMCPServer(b, runtimetest.StartFaulty(b))},
	}
	for _, clients := range []int{1, 8, 64} {
		for _, rev := range runtimetest.Revisions {
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
	runtimetest.Setup(b)
	cat, err := runtimetest.Setup(b).Catalog.Select("say")
	if err != nil {
		b.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": d}); err != nil {
		b.Fatal(err)
	}
	return runtimetest.ServeHTTP(b, rt, httpapi.Options{}).URL + "/mcp"
}

// refMCPServer serves say from a plain go-sdk server, with the tool's MCP
// name and input schema, routing by revision as go-sdk's own two modes
// require.
func refMCPServer(b *testing.B) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        runtimetest.MCPName(b, "say"),
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
//
// For "where the time goes" in BENCHMARKS.md: TOOLC_MCP_CPUPROFILE=FILE
// writes a CPU profile of the calls alone (not the set-up), and the
// clients' goroutines, and those they start (go-sdk's, net/http's), carry
// the profiler label side=client, so that the server's share, in the same
// process, is what has no label.
func benchMCPCalls(b *testing.B, url, rev string, clients int) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "client")))
	defer pprof.SetGoroutineLabels(context.Background())
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
	params := &mcp.CallToolParams{Name: runtimetest.MCPName(b, "say"), Arguments: runtimetest.BenchArgs}
	latencies := make([][]time.Duration, clients)
	var next atomic.Int64
	var wg sync.WaitGroup
	if name := os.Getenv("TOOLC_MCP_CPUPROFILE"); name != "" && b.N > 1 {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
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

// BenchmarkMCPRevisionsPaired measures what BenchmarkMCPRevisions does in
// a form that a loaded machine disturbs less: for each client count and
// revision, the clients of ref, local and plugin stay connected, and many
// short rounds (TOOLC_MCP_ROUNDS, default 15, each a slice of
// TOOLC_MCP_SLICE, default 300ms, per server) alternate between the three
// servers, rotating which goes first. It reports, per server, the median
// over the rounds of calls/s, p50 and p99, the median of each round's
// ratio to ref, and the 1-minute load average before and after. Each
// sub-benchmark runs its rounds once: run it with -benchtime 1x.
func BenchmarkMCPRevisionsPaired(b *testing.B) {
	runtimetest.Setup(b)
	rounds, slice := 15, 300*time.Millisecond
	if v := os.Getenv("TOOLC_MCP_ROUNDS"); v != "" {
		fmt.Sscan(v, &rounds)
	}
	if v := os.Getenv("TOOLC_MCP_SLICE"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			slice = d
		}
	}
	servers := []struct {
		name string
		url  string
	}{
		{"ref", refMCPServer(b)},
		{"local", toolcMCPServer(b, runtime.Local(sayHandler()))},
		{"plugin", toolcMCPServer(b, runtimetest.StartFaulty(b))},
	}
	for _, clients := range []int{1, 8, 64} {
		for _, rev := range runtimetest.Revisions {
			b.Run(fmt.Sprintf("clients=%d/rev=%s", clients, rev), func(b *testing.B) {
				load0 := loadAverage()
				sessions := make([][]*mcp.ClientSession, len(servers))
				for i, srv := range servers {
					sessions[i] = connectBenchClients(b, srv.url, rev, clients)
					callFor(b, sessions[i], slice/3) // warm up: connections, pools, stacks
				}
				rate := make([][]float64, len(servers))
				p50 := make([][]float64, len(servers))
				p99 := make([][]float64, len(servers))
				ratio := make([][]float64, len(servers))
				for r := range rounds {
					this := make([]float64, len(servers))
					for k := range servers {
						i := (k + r) % len(servers)
						calls, lat := callFor(b, sessions[i], slice)
						this[i] = calls
						rate[i] = append(rate[i], calls)
						p50[i] = append(p50[i], float64(lat[len(lat)/2].Microseconds()))
						p99[i] = append(p99[i], float64(lat[len(lat)*99/100].Microseconds()))
					}
					for i := range servers {
						ratio[i] = append(ratio[i], this[i]/this[0])
					}
				}
				load1 := loadAverage()
				for i, srv := range servers {
					b.ReportMetric(medianOf(rate[i]), srv.name+"-calls/s")
					b.ReportMetric(medianOf(p50[i]), srv.name+"-p50-µs")
					b.ReportMetric(medianOf(p99[i]), srv.name+"-p99-µs")
					if i > 0 {
						b.ReportMetric(medianOf(ratio[i]), srv.name+"/ref")
					}
				}
				b.ReportMetric(load0, "load-before")
				b.ReportMetric(load1, "load-after")
				b.ReportMetric(0, "ns/op")
				b.Logf("%d rounds of %s: calls/s ref %v local %v plugin %v", rounds, slice, quartiles(rate[0]), quartiles(rate[1]), quartiles(rate[2]))
			})
		}
	}
}

// connectBenchClients connects n go-sdk clients at rev to url. Each client
// has an HTTP transport of its own, as separate clients do: on the shared
// http.DefaultTransport, which keeps 2 idle connections per host, 8 or 64
// clients in one process open a new connection for most calls, and the
// benchmark would measure TCP set-up on both sides (TOOLC_MCP_SHARED_TRANSPORT=1
// measures that).
func connectBenchClients(b *testing.B, url, rev string, n int) []*mcp.ClientSession {
	sessions := make([]*mcp.ClientSession, n)
	shared := os.Getenv("TOOLC_MCP_SHARED_TRANSPORT") == "1"
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		transport := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
		if !shared {
			own := http.DefaultTransport.(*http.Transport).Clone()
			b.Cleanup(own.CloseIdleConnections)
			transport.HTTPClient = &http.Client{Transport: own}
		}
		s, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		sessions[i] = s
	}
	return sessions
}

// callFor calls say from every session at once, one call after another,
// for d, and returns the calls per second and every call's latency,
// sorted.
func callFor(b *testing.B, sessions []*mcp.ClientSession, d time.Duration) (float64, []time.Duration) {
	params := &mcp.CallToolParams{Name: runtimetest.MCPName(b, "say"), Arguments: runtimetest.BenchArgs}
	latencies := make([][]time.Duration, len(sessions))
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				t := time.Now()
				res, err := s.CallTool(context.Background(), params)
				latencies[i] = append(latencies[i], time.Since(t))
				if err != nil || res.IsError {
					b.Error(res, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		b.Fatal("no call finished")
	}
	return float64(len(all)) / took.Seconds(), all
}

// loadAverage is the 1-minute load average, or -1 where there is no
// /proc/loadavg.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	fmt.Sscan(string(data), &l)
	return l
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// quartiles is the lower quartile, median and upper quartile of xs, rounded.
func quartiles(xs []float64) [3]int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return [3]int{int(s[len(s)/4]), int(s[len(s)/2]), int(s[len(s)*3/4])}
}
