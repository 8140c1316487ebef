package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// The supervisor's tests: a host.Plugin restarts a plugin that crashed,
// was killed or stopped answering its health check, fails the calls that
// were running on it, keeps its callers' deadlines meanwhile, and takes
// the plugin's own children with it. They call through the runtime, with
// the faulty test plugin that internal/runtimetest builds, as toolc serve
// does.

// TestCrash: a plugin that exits in the middle of a call fails that call
// with a clear tool error and is restarted, while another service of the
// same snapshot keeps answering.
func TestCrash(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	pid := p.Pid()
	if pid == 0 {
		t.Fatal("the plugin has no pid")
	}

	var events []string
	res, err := rt.CallWithEvents(context.Background(), "crash", json.RawMessage(`{}`), func(ev runtime.Event) {
		if ev.Log != nil {
			events = append(events, ev.Log.Message)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	runtimetest.WantToolError(t, res, `the handler process of service "faulty" exited during the call`, "restarted", "retried")
	if len(events) != 1 || events[0] != "about to exit" {
		t.Errorf("events before the crash = %q", events)
	}
	testsync.WaitFor(t, 5*time.Second, "the crashed plugin to be gone", func() bool { return !alive(pid) })

	// The plugin is down, or already restarted (a crash starts the
	// restart at once), and the other service answers meanwhile.
	if got := p.Pid(); got == pid {
		t.Errorf("Pid after the crash = %d, the crashed plugin's", got)
	}
	res = runtimetest.Call(t, rt, "add", `{"a": 40, "b": 2}`)
	runtimetest.WantOK(t, res)
	if got := runtimetest.Structured(t, res)["sum"]; got != 42.0 {
		t.Errorf("add = %v", got)
	}

	// The plugin is back within the restart's backoff.
	start := time.Now()
	testsync.WaitFor(t, 5*time.Second, "echo to answer after the crash", func() bool {
		res, err := rt.Call(context.Background(), "echo", json.RawMessage(`{"text":"back"}`))
		return err == nil && !res.IsError
	})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the restart took %s", took)
	}
	if got := p.Pid(); got == 0 || got == pid {
		t.Errorf("Pid after the restart = %d, was %d", got, pid)
	}

	// A plugin killed between calls, not during one, is restarted too.
	pid = p.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testsync.WaitFor(t, 5*time.Second, "the killed plugin to be gone", func() bool { return !alive(pid) })
	testsync.WaitFor(t, 5*time.Second, "echo to answer after a kill", func() bool {
		res, err := rt.Call(context.Background(), "echo", json.RawMessage(`{"text":"back"}`))
		return err == nil && !res.IsError
	})
}

// TestCrashFailsEveryCallInFlight: calls running on a plugin when it dies
// each get the tool error, and none hangs.
func TestCrashFailsEveryCallInFlight(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	const n = 4
	results := make([]*runtime.Result, n)
	sleeping := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// sleep reports progress once it runs in the plugin.
			res, err := rt.CallWithEvents(context.Background(), "sleep", json.RawMessage(`{"ms": 30000}`), func(runtime.Event) {
				sleeping <- struct{}{}
			})
			if err != nil {
				t.Errorf("sleep: %v", err)
				return
			}
			results[i] = res
		}()
	}
	for range n {
		<-sleeping
	}
	res := runtimetest.Call(t, rt, "crash", `{}`)
	runtimetest.WantToolError(t, res, "exited during the call")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("calls in flight did not return after the crash")
	}
	for _, res := range results {
		if res == nil {
			t.Fatal("a call in flight failed without a result")
		}
		runtimetest.WantToolError(t, res, `the handler process of service "faulty" exited during the call`)
	}
	runtimetest.EchoWorks(t, rt)
}

// TestCrashUnderLoad: a plugin that crashes while other calls come and go
// is restarted, and every call either answers or fails with a tool error
// that says why; none hangs.
func TestCrashUnderLoad(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{CallTimeout: 10 * time.Second}, p)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, failed := 0, map[string]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := rt.Call(context.Background(), "echo", json.RawMessage(`{"text":"load"}`))
				mu.Lock()
				switch {
				case err != nil:
					failed[err.Error()]++
				case res.IsError:
					failed[runtimetest.Text(res)]++
				default:
					answered++
				}
				mu.Unlock()
			}
		}()
	}
	for range 3 {
		pid := p.Pid()
		runtimetest.WantToolError(t, runtimetest.Call(t, rt, "crash", `{}`), "exited during the call")
		testsync.WaitFor(t, 5*time.Second, "the plugin to be restarted", func() bool { return p.Pid() != 0 && p.Pid() != pid })
	}
	close(stop)
	wg.Wait()
	if answered == 0 {
		t.Error("no echo call answered")
	}
	for msg := range failed {
		if !strings.Contains(msg, `service "faulty"`) {
			t.Errorf("an echo call failed with %q", msg)
		}
	}
	t.Logf("%d answered, failures: %v", answered, failed)
	runtimetest.EchoWorks(t, rt)
}

// TestSlowRestartKeepsDeadlines: while a crashed plugin takes long to
// start again, a caller with a short deadline gets its deadline error on
// time instead of queueing behind the restart, and the restart goes on for
// the callers that wait.
func TestSlowRestartKeepsDeadlines(t *testing.T) {
	runtimetest.Setup(t)
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow")
	starting := filepath.Join(dir, "starting")
	script := filepath.Join(dir, "faulty.sh")
	// Once the marker slow exists, the plugin says it is starting, and
	// takes 3 s to.
	body := "#!/bin/sh\nif [ -e " + slow + " ]; then touch " + starting + "; sleep 3; fi\nexec " + runtimetest.Setup(t).Binary.Path + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := host.StartPlugin(context.Background(), rpc.ClientConfig{Service: "faulty", Path: script, Stderr: io.Discard}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(0) })
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "echo", `{"text":"up"}`))

	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testsync.WaitFor(t, 5*time.Second, "the killed plugin to be gone", func() bool { return !alive(pid) })
	testsync.WaitFor(t, 5*time.Second, "go-plugin to notice the exit", func() bool { return p.Pid() == 0 })

	// A patient call starts the restart...
	type answer struct {
		res *runtime.Result
		err error
	}
	patient := make(chan answer, 1)
	go func() {
		res, err := rt.Call(context.Background(), "echo", json.RawMessage(`{"text":"back"}`))
		patient <- answer{res, err}
	}()
	testsync.WaitFor(t, 10*time.Second, "the restart to begin", func() bool {
		_, err := os.Stat(starting)
		return err == nil
	})

	// ...and an impatient one comes while it runs.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := rt.Call(ctx, "echo", json.RawMessage(`{"text":"hurry"}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("impatient call = %v, %v; want its deadline", res, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the impatient call returned after %s, held up by the restart", took)
	}

	a := <-patient
	if a.err != nil {
		t.Fatal(a.err)
	}
	runtimetest.WantOK(t, a.res)
	if got := p.Pid(); got == 0 || got == pid {
		t.Errorf("Pid after the restart = %d, was %d", got, pid)
	}
}

// TestHealthCheckRestartsAStoppedPlugin: a plugin that stops answering
// (here SIGSTOP) fails its health check, and is killed and restarted; the
// calls in flight on it are told what happened, at once rather than at
// their timeout.
func TestHealthCheckRestartsAStoppedPlugin(t *testing.T) {
	p, _ := runtimetest.StartPlugin(t, "faulty", host.Options{HealthInterval: 100 * time.Millisecond, HealthTimeout: 300 * time.Millisecond})
	rt := runtimetest.IsolatedRuntime(t, runtime.Options{}, p)
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
	runtimetest.WantToolError(t, a.res, `the handler process of service "faulty" stopped answering: it did not answer a health check within 300ms, so it was killed and is being restarted; the call can be retried`)
	t.Logf("the call in flight returned %s after SIGSTOP", time.Since(start))
	testsync.WaitFor(t, 10*time.Second, "the stopped plugin to be replaced", func() bool { return p.Pid() != 0 && p.Pid() != pid })
	testsync.WaitFor(t, 5*time.Second, "the stopped plugin to be gone", func() bool { return !alive(pid) })
	runtimetest.EchoWorks(t, rt)
	runtimetest.Pings(t, rt, 5)
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
	rt := runtimetest.IsolatedRuntime(t, runtime.Options{CallTimeout: 300 * time.Millisecond}, p)
	pid := p.Pid()
	stop(t, pid)
	runtimetest.WantToolError(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`), "echo did not finish within 300ms")
	testsync.WaitFor(t, time.Minute, "the stopped plugin to be replaced", func() bool { return p.Pid() != 0 && p.Pid() != pid })
	runtimetest.EchoWorks(t, runtimetest.NewRuntime(t, runtime.Options{}, p))
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
			child := int(runtimetest.Structured(t, res)["pid"].(float64))
			defer syscall.Kill(child, syscall.SIGKILL) // only if the test fails
			if !alive(child) {
				t.Fatalf("the grandchild %d is not running", child)
			}
			if how == "crash" {
				runtimetest.WantToolError(t, runtimetest.Call(t, rt, "crash", `{}`), "exited during the call (exit status 3)")
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
const hostHelperEnv = "TOOLC_HOST_TEST_KILLED_HOST"

func runHostHelper() {
	p, err := host.StartPlugin(context.Background(), rpc.ClientConfig{Service: "faulty", Path: os.Getenv(hostHelperEnv)}, nil)
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
	runtimetest.EchoWorks(t, rt)
}

// TestPanicAtStart: a plugin that panics before it serves is reported with
// its panic, not as something that is not a toolc plugin.
func TestPanicAtStart(t *testing.T) {
	runtimetest.Setup(t)
	_, err := host.StartPlugin(context.Background(), rpc.ClientConfig{
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
