package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpimport"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"
)

// TestFigures measures what BENCHMARKS.md reports for upstream servers:
// the p50 of a call through toolc against calling the same server
// directly, at 1 and 8 clients, over stdio and Streamable HTTP; toolc's
// memory per upstream; and the time toolc import takes on a server of
// 100 tools. It runs only with TOOLC_UPSTREAM_FIGURES=1:
//
//	TOOLC_UPSTREAM_FIGURES=1 go test -run TestFigures -v ./upstream/
func TestFigures(t *testing.T) {
	if os.Getenv("TOOLC_UPSTREAM_FIGURES") == "" {
		t.Skip("set TOOLC_UPSTREAM_FIGURES=1 to measure")
	}
	const calls = 2000
	args := json.RawMessage(`{"text":"hello"}`)

	// Over stdio: a go-sdk client and toolc's runtime, each with a process
	// of the same server of its own.
	exe, _ := os.Executable()
	direct := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), modeEnv+"=normal")
	ds, err := direct.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	f := start(t, "normal", func(_ *catalog.Upstream, o *upstream.Options) { o.HealthInterval = -1 })
	directCall := func(s *mcp.ClientSession) func() error {
		return func() error {
			_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
			return err
		}
	}
	viaRuntime := func() error {
		r, err := f.rt.Call(context.Background(), "echo", args)
		if err == nil && r.IsError {
			err = fmt.Errorf("%s", text(r))
		}
		return err
	}

	// Over Streamable HTTP: the server served by go-sdk, called directly,
	// and through toolc's HTTP server with the server as its upstream url.
	srv := newTestServer("normal")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer up.Close()
	hs, err := direct.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: up.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	svc := contract(t, &catalog.Upstream{URL: up.URL})
	svc.Dir = t.TempDir()
	us, err := upstream.Start(context.Background(), svc, upstream.Options{HealthInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close(time.Second)
	rt := runtime.New(runtime.Options{})
	cat := &catalog.Catalog{Services: []*catalog.Service{svc}}
	cat.Seal()
	if _, err := rt.Swap(us.Filter(cat), map[string]runtime.Dispatcher{"up": us}); err != nil {
		t.Fatal(err)
	}
	toolc := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{}), httpapi.Options{}))
	defer toolc.Close()
	ts, err := direct.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: toolc.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	// The same endpoint with an in-process echo: toolc's own MCP serving,
	// with no upstream behind it.
	local := &catalog.Service{Name: "loc", Version: "1.0.0", Description: "Local", Dir: ".", Handler: ".",
		Tools: []*catalog.Tool{{Name: "lecho", Description: "Echo", Request: catalog.Message{Fields: []*catalog.Field{{Name: "text", Type: catalog.String, Description: "Text", Required: true}}}}}}
	lrt := runtime.New(runtime.Options{})
	lcat := &catalog.Catalog{Services: []*catalog.Service{local}}
	lcat.Seal()
	if _, err := lrt.Swap(lcat, map[string]runtime.Dispatcher{"loc": runtime.Local(plugins.Handle("lecho", func(_ context.Context, r struct{ Text string }) (*plugins.Result, error) {
		return plugins.Text(r.Text), nil
	}))}); err != nil {
		t.Fatal(err)
	}
	ltoolc := httptest.NewServer(httpapi.NewHandler(lrt, mcpserver.New(lrt, mcpserver.Options{}), httpapi.Options{}))
	defer ltoolc.Close()
	ls, err := direct.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ltoolc.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	viaToolcLocal := func() error {
		r, err := ls.CallTool(context.Background(), &mcp.CallToolParams{Name: "loc_lecho", Arguments: args})
		if err == nil && r.IsError {
			err = fmt.Errorf("tool error")
		}
		return err
	}
	// The same two at 2025-11-25, the revision the direct client speaks
	// to the go-sdk server (a stateful go-sdk server answers no
	// server/discover, and its clients fall back), where the two above
	// speak 2026-07-28 to toolc's endpoint.
	legacy := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	ts25, err := direct.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: toolc.URL + "/mcp"}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer ts25.Close()
	ls25, err := direct.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ltoolc.URL + "/mcp"}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer ls25.Close()
	t.Logf("revisions: HTTP direct %s; toolc serve's handler %s and %s", hs.InitializeResult().ProtocolVersion,
		ts.InitializeResult().ProtocolVersion, ts25.InitializeResult().ProtocolVersion)
	callOn := func(cs *mcp.ClientSession, name string) func() error {
		return func() error {
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err == nil && r.IsError {
				err = fmt.Errorf("tool error")
			}
			return err
		}
	}
	viaToolcHTTP := func() error {
		r, err := ts.CallTool(context.Background(), &mcp.CallToolParams{Name: "up_echo", Arguments: args})
		if err == nil && r.IsError {
			err = fmt.Errorf("tool error")
		}
		return err
	}

	t.Logf("GOMAXPROCS=%d, %d calls per cell, interleaved, the median of 3 rounds", goruntime.GOMAXPROCS(0), calls)
	for _, clients := range []int{1, 8} {
		rows := []struct {
			name string
			f    func() error
		}{
			{"stdio, direct (go-sdk client)", directCall(ds)},
			{"stdio, through toolc's runtime", viaRuntime},
			{"HTTP, direct (go-sdk client)", directCall(hs)},
			{"HTTP, through toolc's runtime", func() error {
				r, err := rt.Call(context.Background(), "echo", args)
				if err == nil && r.IsError {
					err = fmt.Errorf("%s", text(r))
				}
				return err
			}},
			{"HTTP, through toolc's runtime, with events", func() error {
				r, err := rt.CallWithEvents(context.Background(), "echo", args, func(runtime.Event) {})
				if err == nil && r.IsError {
					err = fmt.Errorf("%s", text(r))
				}
				return err
			}},
			{"HTTP, through toolc serve's handler", viaToolcHTTP},
			{"HTTP, toolc serve's handler, in-process echo", viaToolcLocal},
			{"HTTP, toolc serve's handler, 2025-11-25", callOn(ts25, "up_echo")},
			{"HTTP, toolc serve's handler, in-process echo, 2025-11-25", callOn(ls25, "loc_lecho")},
		}
		res := make([][]time.Duration, len(rows))
		rates := make([][]float64, len(rows))
		for range 3 {
			for i, r := range rows {
				p50, rate := measure(t, clients, calls, r.f)
				res[i] = append(res[i], p50)
				rates[i] = append(rates[i], rate)
			}
		}
		for i, r := range rows {
			slices.Sort(res[i])
			slices.Sort(rates[i])
			t.Logf("%d clients  %-56s p50 %8s  %8.0f calls/s", clients, r.name, res[i][1].Round(time.Microsecond), rates[i][1])
		}
	}

	// toolc's memory per upstream: the heap that ten more Servers take.
	goruntime.GC()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	var servers []*upstream.Server
	for range 10 {
		s, err := upstream.Start(context.Background(), svc, upstream.Options{HealthInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	t.Logf("toolc's heap per upstream (HTTP, %d tools): %.0f KiB", len(svc.Tools), float64(after.HeapInuse-before.HeapInuse)/10/1024)
	for _, s := range servers {
		s.Close(0)
	}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", f.srv.Pid())); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				t.Logf("the go-sdk test server's own RSS over stdio: %s", strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:")))
			}
		}
	}

	// toolc import on a server of 100 tools, each of six fields.
	var tools []*mcp.Tool
	for i := range 100 {
		tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "A tool of a hundred",
			InputSchema: json.RawMessage(`{"type":"object","properties":{
				"query":{"type":"string","description":"What to find","minLength":1},
				"limit":{"type":"integer","description":"Most results","minimum":1,"maximum":100,"default":10},
				"sort":{"type":"string","description":"Order","enum":["asc","desc"]},
				"tags":{"type":"array","items":{"type":"string"},"description":"Tags"},
				"ratio":{"type":"number","description":"A ratio","exclusiveMinimum":0},
				"exact":{"type":"boolean","description":"Exact match"}},"required":["query"]}`)})
	}
	big := mcp.NewServer(&mcp.Implementation{Name: "hundred", Version: "1.0.0"}, nil)
	for _, tool := range tools {
		big.AddTool(tool, handlersNoop)
	}
	bs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return big }, nil))
	defer bs.Close()
	var took []time.Duration
	for i := range 5 {
		out := filepath.Join(t.TempDir(), fmt.Sprintf("hundred%d", i))
		start := time.Now()
		rep, err := mcpimport.Run(context.Background(), mcpimport.Options{Out: out, URL: bs.URL})
		if err != nil || len(rep.Unchanged) != 100 {
			t.Fatalf("import: %v, %+v", err, rep)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("toolc import of 100 tools over HTTP, contract and lock written and compiled: median %s of 5 [%s, %s]", took[2].Round(time.Millisecond), took[0].Round(time.Millisecond), took[4].Round(time.Millisecond))
}

// measure runs calls calls of f from clients goroutines, and returns
// their median latency and the calls per second.
func measure(t *testing.T, clients, calls int, f func() error) (time.Duration, float64) {
	t.Helper()
	for range 50 { // warm up
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	lat := make([]time.Duration, calls)
	var wg sync.WaitGroup
	var next sync.Mutex
	i := 0
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				n := i
				i++
				next.Unlock()
				if n >= calls {
					return
				}
				s := time.Now()
				if err := f(); err != nil {
					t.Error(err)
					return
				}
				lat[n] = time.Since(s)
			}
		}()
	}
	wg.Wait()
	rate := float64(calls) / time.Since(start).Seconds()
	slices.Sort(lat)
	return lat[calls/2], rate
}
