package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The isolation tests run the faulty plugin beside the healthy one, a
// second process of the same binary that serves only ping, in one
// runtime, and hold the faulty plugin to each of its faults in turn.

// percentile returns the q-th percentile (0 < q <= 1) of ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// healthyP99Bound is what the healthy service's p99 latency must stay
// under, whatever its neighbour does. A ping takes about a millisecond;
// the bound leaves room for a loaded CI machine under -race, and is still
// far below what a shared limit or a blocked host would cost (seconds).
const healthyP99Bound = 250 * time.Millisecond

// TestHealthyBesideFaulty: while the faulty service misbehaves in each of
// its ways, the healthy service beside it in the same runtime answers as
// fast as ever, and the faulty service serves again afterwards.
//
// TOOLC_ISOLATION_PINGS raises the number of pings per case, for the
// figures in BENCHMARKS.md.
func TestHealthyBesideFaulty(t *testing.T) {
	n := 100
	if v := os.Getenv("TOOLC_ISOLATION_PINGS"); v != "" {
		fmt.Sscan(v, &n)
	}
	for _, tc := range []struct {
		name string
		tool string
		args string
		// workers call tool in a loop until the pings are done; calls,
		// if set, bounds their calls in all.
		workers, calls int
		// inFlight is how many calls to wait for before pinging.
		inFlight int
	}{
		{name: "no fault", tool: "echo", args: `{"text":"x"}`, workers: 0},
		{name: "70 calls that hang", tool: "sleep", args: `{"ms":2000}`, workers: 70, inFlight: 70},
		{name: "70 calls that hang ignoring their context", tool: "hang", args: `{"ms":2000}`, workers: 70, inFlight: 70},
		{name: "exit mid-call", tool: "crash", args: `{}`, workers: 1},
		{name: "panic", tool: "panic", args: `{}`, workers: 4},
		{name: "garbage on fd 1", tool: "stdout", args: `{"text":"` + strings.Repeat("garbage ", 128) + `\n"}`, workers: 4},
		{name: "flood stderr", tool: "flood_stderr", args: `{"lines":20000}`, workers: 1, calls: 3},
		{name: "goroutine leak", tool: "leak", args: `{"goroutines":20000,"kib":20000}`, workers: 1, calls: 1},
		{name: "huge result", tool: "big_result", args: `{"bytes":67108864}`, workers: 1, calls: 2},
		{name: "invalid UTF-8", tool: "bad_utf8", args: `{}`, workers: 4},
		{name: "grandchild", tool: "grandchild", args: `{}`, workers: 1, calls: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faulty, _ := runtimetest.StartPlugin(t, "faulty", host.Options{})
			rt := runtimetest.IsolatedRuntime(t, runtime.Options{}, faulty)
			runtimetest.Pings(t, rt, 5) // warm up both connections

			stop := make(chan struct{})
			var wg sync.WaitGroup
			var budget atomic.Int64
			budget.Store(int64(tc.calls))
			for range tc.workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if tc.calls > 0 && budget.Add(-1) < 0 {
							return
						}
						ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
						rt.Call(ctx, tc.tool, json.RawMessage(tc.args))
						cancel()
					}
				}()
			}
			if tc.inFlight > 0 {
				testsync.WaitFor(t, 10*time.Second, fmt.Sprintf("%d calls in flight", tc.inFlight), func() bool { return rt.InFlight() >= tc.inFlight })
			} else if tc.workers > 0 {
				time.Sleep(20 * time.Millisecond)
			}
			lat := runtimetest.Pings(t, rt, n)
			close(stop)
			wg.Wait()
			p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
			t.Logf("healthy ping beside %s: p50 %s, p99 %s, max %s (%d pings)", tc.name, p50, p99, slices.Max(lat), n)
			if p99 > healthyP99Bound {
				t.Errorf("healthy ping p99 = %s beside %s, over %s", p99, tc.name, healthyP99Bound)
			}
			// The faulty service serves again once its calls are over (a
			// crashed plugin after its restart).
			testsync.WaitFor(t, 15*time.Second, "the faulty service to answer again", func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				res, err := rt.Call(ctx, "echo", json.RawMessage(`{"text":"back"}`))
				return err == nil && !res.IsError
			})
		})
	}
}

// TestDrain: a draining runtime takes no new calls, and waits for the ones
// in flight; a plugin stopped past its grace period tells the calls still
// running why, and does not claim to restart.
func TestDrain(t *testing.T) {
	p, _ := runtimetest.StartPlugin(t, "faulty", host.Options{})
	rt := runtimetest.IsolatedRuntime(t, runtime.Options{}, p)
	results := make(chan *runtime.Result, 2)
	for _, ms := range []int{300, 5000} {
		go func() {
			res, err := rt.Call(context.Background(), "sleep", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, ms)))
			if err != nil {
				res = plugins.Errorf("error: %v", err)
			}
			results <- res
		}()
	}
	testsync.WaitFor(t, 5*time.Second, "2 calls in flight", func() bool { return rt.InFlight() == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	left := rt.Drain(ctx)
	cancel()
	if left != 1 {
		t.Errorf("Drain left %d calls in flight, want 1", left)
	}
	if res, err := rt.Call(context.Background(), "ping", json.RawMessage(`{}`)); !errors.Is(err, runtime.ErrDraining) {
		t.Errorf("a call during the drain = %v, %v; want ErrDraining", res, err)
	}
	runtimetest.WantOK(t, <-results)
	p.Stop(0, "the server is shutting down, and the call ran past the grace period of 1s")
	res := <-results
	runtimetest.WantToolError(t, res, `the handler of service "faulty" was stopped before the call finished: the server is shutting down, and the call ran past the grace period of 1s`)
	if strings.Contains(runtimetest.Text(res), "restart") {
		t.Errorf("the message claims a restart: %s", runtimetest.Text(res))
	}
	if left := rt.Drain(context.Background()); left != 0 {
		t.Errorf("%d calls in flight after the stop", left)
	}
}

// TestInvalidUTF8: a handler's text that is not UTF-8 arrives with U+FFFD
// in place of the bad bytes, in results, errors and log lines alike.
func TestInvalidUTF8(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	var logs []string
	res, err := rt.CallWithEvents(context.Background(), "bad_utf8", json.RawMessage(`{}`), func(ev runtime.Event) {
		if ev.Log != nil {
			logs = append(logs, ev.Log.Message)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	runtimetest.WantOK(t, res)
	if got, want := runtimetest.Text(res), "caf\uFFFD au lait \uFFFD"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if len(logs) != 1 || logs[0] != "log line with invalid UTF-8: \uFFFD" {
		t.Errorf("logs = %q", logs)
	}
	res = runtimetest.Call(t, rt, "bad_utf8_error", `{}`)
	runtimetest.WantToolError(t, res, "no such file: caf\uFFFD")
	if !utf8.ValidString(runtimetest.Text(res)) {
		t.Errorf("the tool error is not UTF-8: %q", runtimetest.Text(res))
	}

	// In-process handlers, which cross no protobuf, are held to it too.
	rt = runtime.New(runtime.Options{})
	bad := fixedHandler{tool: "add", res: &plugins.Result{
		Content:           []plugins.Content{{Type: "text", Text: "caf\xe9"}},
		StructuredContent: json.RawMessage(`{"sum":3}`),
	}}
	if _, err := rt.Swap(runtimetest.Setup(t).Catalog, map[string]runtime.Dispatcher{"faulty": runtimetest.StartFaulty(t), "inproc": runtime.Local(bad, runtimetest.RouteHandler())}); err != nil {
		t.Fatal(err)
	}
	res = runtimetest.Call(t, rt, "add", `{"a":1,"b":2}`)
	if got := runtimetest.Text(res); got != "caf\uFFFD" || res.IsError {
		t.Errorf("in-process text = %q (error %t)", got, res.IsError)
	}
}

// TestCancelledCallsAreCounted: calls that the caller cancelled, let run
// past its own deadline, or abandoned by disconnecting are counted in
// toolc_calls_total, each under its outcome.
func TestCancelledCallsAreCounted(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := rt.Call(ctx, "sleep", json.RawMessage(`{"ms":60000}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	if _, err := rt.Call(ctx, "sleep", json.RawMessage(`{"ms":60000}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call past its deadline: %v", err)
	}
	cancel()

	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	client := &http.Client{Timeout: 200 * time.Millisecond}
	if resp, err := client.Post(ts.URL+"/v1/call", "application/json", strings.NewReader(`{"name":"sleep","arguments":{"ms":60000}}`)); err == nil {
		resp.Body.Close()
		t.Fatal("the call answered before the client gave up")
	}
	want := map[string]string{
		`toolc_calls_total{outcome="cancelled",tool="sleep"} 2`: "the cancelled and the disconnected call",
		`toolc_calls_total{outcome="deadline",tool="sleep"} 1`:  "the call past its deadline",
	}
	testsync.WaitFor(t, 5*time.Second, "the calls to be counted", func() bool {
		body := runtimetest.Do(t, "GET", ts.URL+"/metrics", "", nil).Body
		for w := range want {
			if !strings.Contains(body, w) {
				return false
			}
		}
		return true
	})
}
