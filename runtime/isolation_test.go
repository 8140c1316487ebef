package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins"
	pluginrpc "github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// The isolation tests run the faulty plugin beside the healthy one, a
// second process of the same binary that serves only ping, in one
// runtime, and hold the faulty plugin to each of its faults in turn.

// isolatedRuntime serves faulty through p, inproc in-process, and healthy
// through a plugin of its own.
func isolatedRuntime(t testing.TB, opts runtime.Options, p *host.Plugin) *runtime.Runtime {
	t.Helper()
	healthy, _ := runtimetest.StartPlugin(t, "healthy", host.Options{})
	cat := &catalog.Catalog{Services: append(slices.Clone(runtimetest.Setup(t).Catalog.Services), runtimetest.Setup(t).Healthy)}
	rt := runtime.New(opts)
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{
		"faulty":  p,
		"inproc":  runtime.Local(runtimetest.InprocHandlers()...),
		"healthy": healthy,
	}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// pings calls the healthy service's ping n times, one after another, and
// returns how long each took.
func pings(t testing.TB, rt *runtime.Runtime, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		res, err := rt.Call(ctx, "ping", json.RawMessage(`{}`))
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("ping after %s: %v", took, err)
		}
		if res.IsError || runtimetest.Text(res) != "pong" {
			t.Fatalf("ping answered %q", runtimetest.Text(res))
		}
		out = append(out, took)
	}
	return out
}

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
			rt := isolatedRuntime(t, runtime.Options{}, faulty)
			pings(t, rt, 5) // warm up both connections

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
			lat := pings(t, rt, n)
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

// TestHealthCheckRestartsAStoppedPlugin: a plugin that stops answering
// (here SIGSTOP) fails its health check, and is killed and restarted; the
// calls in flight on it are told what happened, at once rather than at
// their timeout.
func TestHealthCheckRestartsAStoppedPlugin(t *testing.T) {
	p, _ := runtimetest.StartPlugin(t, "faulty", host.Options{HealthInterval: 100 * time.Millisecond, HealthTimeout: 300 * time.Millisecond})
	rt := isolatedRuntime(t, runtime.Options{}, p)
	pid := p.Pid()

	type answer struct {
		res *runtime.Result
		err error
	}
	inFlight := make(chan answer, 1)
	sleeping := make(chan struct{}, 1)
	go func() {
		res, err := rt.CallWithEvents(context.Background(), "sleep", json.RawMessage(`{"ms":60000}`), func(runtime.Event) {
			sleeping <- struct{}{}
		})
		inFlight <- answer{res, err}
	}()
	<-sleeping
	stop(t, pid)
	start := time.Now()
	var a answer
	select {
	case a = <-inFlight:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight on the stopped plugin did not return")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	wantToolError(t, a.res, `the handler process of service "faulty" stopped answering: it did not answer a health check within 300ms, so it was killed and is being restarted; the call can be retried`)
	t.Logf("the call in flight returned %s after SIGSTOP", time.Since(start))
	testsync.WaitFor(t, 10*time.Second, "the stopped plugin to be replaced", func() bool { return p.Pid() != 0 && p.Pid() != pid })
	testsync.WaitFor(t, 5*time.Second, "the stopped plugin to be gone", func() bool { return !alive(pid) })
	echoWorks(t, rt)
	pings(t, rt, 5)
}

// stop sends pid SIGSTOP and waits until it has stopped: the signal takes
// effect when the process is next scheduled, not when kill returns.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // only if the test fails
	testsync.WaitFor(t, 5*time.Second, fmt.Sprintf("process %d to stop", pid), func() bool { return procState(pid) == "T" })
}

// procState is the state letter of pid in /proc/PID/stat.
func procState(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// TestTimedOutCallChecksHealth: with no interval to speak of, a call that
// times out on a stopped plugin has it checked, and restarted, at once.
//
// The short timeouts only ever run against the stopped plugin, which
// cannot answer in any time. The restarted plugin is called through a
// second runtime over the same plugin with the default call timeout: its
// first call on a loaded machine may take longer than 300ms, and a tool
// error there (and the health check it would trigger, against a plugin
// that is merely slow) would say nothing about the restart.
func TestTimedOutCallChecksHealth(t *testing.T) {
	p, _ := runtimetest.StartPlugin(t, "faulty", host.Options{HealthInterval: time.Hour, HealthTimeout: 300 * time.Millisecond})
	rt := isolatedRuntime(t, runtime.Options{CallTimeout: 300 * time.Millisecond}, p)
	pid := p.Pid()
	stop(t, pid)
	wantToolError(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`), "echo did not finish within 300ms")
	testsync.WaitFor(t, time.Minute, "the stopped plugin to be replaced", func() bool { return p.Pid() != 0 && p.Pid() != pid })
	echoWorks(t, runtimetest.NewRuntime(t, runtime.Options{}, p))
}

// TestDrain: a draining runtime takes no new calls, and waits for the ones
// in flight; a plugin stopped past its grace period tells the calls still
// running why, and does not claim to restart.
func TestDrain(t *testing.T) {
	p, _ := runtimetest.StartPlugin(t, "faulty", host.Options{})
	rt := isolatedRuntime(t, runtime.Options{}, p)
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
	wantToolError(t, res, `the handler of service "faulty" was stopped before the call finished: the server is shutting down, and the call ran past the grace period of 1s`)
	if strings.Contains(runtimetest.Text(res), "restart") {
		t.Errorf("the message claims a restart: %s", runtimetest.Text(res))
	}
	if left := rt.Drain(context.Background()); left != 0 {
		t.Errorf("%d calls in flight after the stop", left)
	}
}

// TestGrandchildEndsWithPlugin: a handler's child process ends with its
// plugin, whether the plugin crashes or is stopped.
func TestGrandchildEndsWithPlugin(t *testing.T) {
	for _, how := range []string{"crash", "stop"} {
		t.Run(how, func(t *testing.T) {
			p, _ := runtimetest.StartPlugin(t, "faulty", host.Options{})
			rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
			res := runtimetest.Call(t, rt, "grandchild", `{}`)
			runtimetest.WantOK(t, res)
			child := int(structured(t, res)["pid"].(float64))
			defer syscall.Kill(child, syscall.SIGKILL) // only if the test fails
			if !alive(child) {
				t.Fatalf("the grandchild %d is not running", child)
			}
			if how == "crash" {
				wantToolError(t, runtimetest.Call(t, rt, "crash", `{}`), "exited during the call (exit status 3)")
			} else {
				p.Close(0)
			}
			testsync.WaitFor(t, 5*time.Second, fmt.Sprintf("grandchild %d to end with its plugin", child), func() bool { return !alive(child) })
		})
	}
}

// hostHelperEnv makes the test binary a host: it starts the faulty plugin
// at the path the variable names, has it start a grandchild, prints both
// pids and waits to be killed.
const hostHelperEnv = "TOOLC_RUNTIME_TEST_HOST"

func runHostHelper() {
	p, err := host.StartPlugin(context.Background(), pluginrpc.ClientConfig{Service: "faulty", Path: os.Getenv(hostHelperEnv)}, nil)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	res, err := p.Call(context.Background(), "grandchild", "call-1", json.RawMessage(`{}`), nil)
	if err != nil || res.IsError {
		fmt.Println("error", err, res)
		os.Exit(1)
	}
	var out struct{ Pid int }
	json.Unmarshal(res.StructuredContent.(json.RawMessage), &out)
	fmt.Println("pids", p.Pid(), out.Pid)
	time.Sleep(time.Minute)
}

// TestGrandchildEndsWithKilledHost: SIGKILL gives the host no chance to
// clean up; the kernel ends the plugin (Pdeathsig), and the watchdog in
// the plugin's process group ends the grandchild.
func TestGrandchildEndsWithKilledHost(t *testing.T) {
	runtimetest.Setup(t)
	h := exec.Command(os.Args[0], "-test.run=^$")
	h.Env = append(os.Environ(), hostHelperEnv+"="+runtimetest.Setup(t).Binary.Path)
	h.Stderr = os.Stderr
	out, err := h.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	var line [256]byte
	n, _ := out.Read(line[:])
	var plugin, child int
	if _, err := fmt.Sscanf(string(line[:n]), "pids %d %d", &plugin, &child); err != nil {
		h.Process.Kill()
		t.Fatalf("host helper said %q", line[:n])
	}
	defer syscall.Kill(child, syscall.SIGKILL) // only if the test fails
	defer syscall.Kill(plugin, syscall.SIGKILL)
	if !alive(plugin) || !alive(child) {
		t.Fatalf("plugin %d or grandchild %d not running", plugin, child)
	}
	h.Process.Kill()
	h.Wait()
	testsync.WaitFor(t, 5*time.Second, "the plugin to die with its host", func() bool { return !alive(plugin) })
	testsync.WaitFor(t, 5*time.Second, "the grandchild to die with its host", func() bool { return !alive(child) })
}

// TestStdoutAfterHandshakeIsLogged: what a plugin writes to fd 1 after the
// handshake reaches the log, prefixed like its stderr, and the plugin goes
// on serving.
func TestStdoutAfterHandshakeIsLogged(t *testing.T) {
	p, stderr := runtimetest.StartPlugin(t, "faulty", host.Options{})
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "stdout", `{"text":"not the handshake\n"}`))
	testsync.WaitFor(t, 5*time.Second, "fd 1's output in the log", func() bool {
		return strings.Contains(stderr.String(), "[faulty] not the handshake\n")
	})
	echoWorks(t, rt)
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
	wantToolError(t, res, "no such file: caf\uFFFD")
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

// TestPanicAtStart: a plugin that panics before it serves is reported with
// its panic, not as something that is not a toolc plugin.
func TestPanicAtStart(t *testing.T) {
	runtimetest.Setup(t)
	_, err := host.StartPlugin(context.Background(), pluginrpc.ClientConfig{
		Service: "faulty", Path: runtimetest.Setup(t).Binary.Path, Env: []string{"FAULTY_PANIC_AT_START=1"}, Stderr: &testsync.Buffer{},
	}, nil)
	if err == nil {
		t.Fatal("the start succeeded")
	}
	for _, want := range []string{`service "faulty"`, "ended during its start (exit status 2)", "panic: deliberate panic at start (in main.main, ", "main.go:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "not a toolc plugin") {
		t.Errorf("error %q calls it not a toolc plugin", err)
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
