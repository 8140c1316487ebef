package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"
)

// healthyP99Bound is what the healthy service's p99 latency must stay
// under beside a hung upstream: a call takes well under a millisecond,
// and the bound leaves room for a loaded CI machine under -race while
// staying far below what a shared limit would cost (the hung calls'
// timeout).
const healthyP99Bound = 250 * time.Millisecond

func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// TestHealthyBesideHungUpstream: an upstream server that hangs every call
// it gets, with 70 calls to it (64 in flight, the service's own limit,
// and 6 waiting for a slot), costs a healthy upstream service in the same
// runtime nothing but noise: its echo, called at a steady rate, keeps its
// latency.
//
// TOOLC_ISOLATION_PINGS raises the number of calls per case (default
// 100), for the figures in BENCHMARKS.md.
func TestHealthyBesideHungUpstream(t *testing.T) {
	n := 100
	if v := os.Getenv("TOOLC_ISOLATION_PINGS"); v != "" {
		fmt.Sscan(v, &n)
	}
	const hungCalls, rate = 70, 5 * time.Millisecond

	// The hung server: go-sdk over Streamable HTTP, whose one tool waits
	// until its call is cancelled.
	var inFlight atomic.Int64
	testDone := make(chan struct{})
	hang := &mcp.Tool{Name: "hang", Description: "Wait until the call is cancelled", InputSchema: schema(``)}
	hungSrv := mcp.NewServer(&mcp.Implementation{Name: "hung", Version: "1.0.0"}, nil)
	hungSrv.AddTool(hang, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		select {
		case <-ctx.Done():
		case <-testDone:
		}
		return nil, ctx.Err()
	})
	hts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return hungSrv }, nil))
	defer hts.Close()
	defer close(testDone)
	hungSvc := &catalog.Service{Name: "hung", Version: "1.0.0", Description: "A server that hangs", Dir: t.TempDir(), Handler: ".",
		Upstream: &catalog.Upstream{URL: hts.URL}, Tools: []*catalog.Tool{upstream.State(hang).Tool}}

	// The healthy server: this test binary over stdio, in a process of
	// its own, of which the contract declares echo.
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/secret.txt", []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	okSvc := contract(t, stdioUpstream(t))
	okSvc.Name, okSvc.Dir = "ok", dir
	okSvc.Tools = slices.DeleteFunc(okSvc.Tools, func(tl *catalog.Tool) bool { return tl.Name != "echo" })

	cat := &catalog.Catalog{Services: []*catalog.Service{hungSvc, okSvc}}
	cat.Seal()
	log := &logBuffer{}
	set, err := upstream.StartAll(context.Background(), cat, upstream.Options{
		Logger:  slog.New(slog.NewTextHandler(log, nil)),
		Stderr:  &logBuffer{},
		Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH"), "MODE_FOR_TEST=normal"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Stop(time.Second, "the test ended")
	rt := runtime.New(runtime.Options{CallTimeout: 5 * time.Minute})
	if err := set.Serve(rt, cat, set.Dispatchers()); err != nil {
		t.Fatal(err)
	}

	// pings calls echo n times at a steady rate, and returns how long
	// each took.
	pings := func(n int) []time.Duration {
		t.Helper()
		tick := time.NewTicker(rate)
		defer tick.Stop()
		out := make([]time.Duration, 0, n)
		for range n {
			<-tick.C
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			start := time.Now()
			res, err := rt.Call(ctx, "echo", json.RawMessage(`{"text":"ping"}`))
			took := time.Since(start)
			cancel()
			if err != nil || res.IsError || text(res) != "ping" {
				t.Fatalf("echo after %s: %v %+v", took, err, res)
			}
			out = append(out, took)
		}
		return out
	}
	pings(20) // warm up

	base := pings(n)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range hungCalls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt.Call(ctx, "hang", json.RawMessage(`{}`))
		}()
	}
	// 64 reach the server; the other 6 wait for a slot of the service's.
	slots := int64(rt.Options().MaxConcurrentCalls)
	deadline := time.Now().Add(30 * time.Second)
	for inFlight.Load() < slots {
		if time.Now().After(deadline) {
			t.Fatalf("%d hung calls reached the server, want %d", inFlight.Load(), slots)
		}
		time.Sleep(10 * time.Millisecond)
	}
	hung := pings(n)
	held := inFlight.Load()
	cancel()
	wg.Wait()
	// The cancelled calls end at the server too. The bound is for a hang,
	// and is long for a -race run at load 30.
	deadline = time.Now().Add(30 * time.Second)
	for inFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := inFlight.Load(); left > 0 {
		t.Errorf("%d of the cancelled calls still run at the hung server 30 s later", left)
	}

	t.Logf("log:\n%s", log)
	t.Logf("healthy echo at one call per %s, %d calls: p50 %s p99 %s alone; p50 %s p99 %s beside %d hung calls (%d in the hung server)",
		rate, n, percentile(base, 0.5), percentile(base, 0.99), percentile(hung, 0.5), percentile(hung, 0.99), hungCalls, held)
	if held < slots {
		t.Errorf("only %d hung calls were held while the healthy service was called", held)
	}
	if p := percentile(hung, 0.99); p > healthyP99Bound {
		t.Errorf("beside the hung upstream, the healthy p99 is %s, over %s", p, healthyP99Bound)
	}
}
