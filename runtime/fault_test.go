package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/host"
	pluginrpc "github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
)

func TestPanicIsAToolError(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	pid := p.Pid()
	res := runtimetest.Call(t, rt, "panic", `{}`)
	wantToolError(t, res, "panic in tool panic: deliberate panic in faulty")
	// The stack went to the operator's stderr, not to the model.
	if strings.Contains(runtimetest.Text(res), "goroutine") {
		t.Errorf("the tool error shows the stack: %s", runtimetest.Text(res))
	}
	echoWorks(t, rt)
	if p.Pid() != pid {
		t.Errorf("the plugin was restarted after a panic: pid %d, then %d", pid, p.Pid())
	}
}

func TestTimeout(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{CallTimeout: 200 * time.Millisecond}, p)
	pid := p.Pid()
	for _, tool := range []string{"sleep", "hang"} {
		t.Run(tool, func(t *testing.T) {
			start := time.Now()
			res := runtimetest.Call(t, rt, tool, `{"ms": 60000}`)
			took := time.Since(start)
			wantToolError(t, res, tool+" did not finish within 200ms and was cancelled")
			if took > 5*time.Second {
				t.Errorf("the timed-out call returned after %s", took)
			}
			// The plugin answers the next call at once, the hanging
			// handler notwithstanding (the bound leaves room for a busy
			// machine; the hang itself lasts a minute).
			start = time.Now()
			echoWorks(t, rt)
			if took := time.Since(start); took > time.Second {
				t.Errorf("echo after a timeout took %s", took)
			}
		})
	}
	if p.Pid() != pid {
		t.Errorf("the plugin was restarted after a timeout: pid %d, then %d", pid, p.Pid())
	}
	// A call within the bound is not affected.
	res := runtimetest.Call(t, rt, "sleep", `{"ms": 10}`)
	runtimetest.WantOK(t, res)
}

// TestCallerCancels: a caller's own context ending is the caller's error,
// not a tool error about the runtime's timeout.
func TestCallerCancels(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{CallTimeout: time.Minute}, runtimetest.StartFaulty(t))
	for _, tool := range []string{"sleep", "hang"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		res, err := rt.Call(ctx, tool, json.RawMessage(`{"ms": 60000}`))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || res != nil {
			t.Errorf("%s past the caller's deadline = %v, %v; want the context's error", tool, res, err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		res, err = rt.Call(ctx, tool, json.RawMessage(`{"ms": 60000}`))
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("%s cancelled by the caller = %v, %v; want context.Canceled", tool, res, err)
		}
	}
	echoWorks(t, rt)
}

// alive reports whether pid is a running process, not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // not Linux
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

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
	wantToolError(t, res, `the handler process of service "faulty" exited during the call`, "restarted", "retried")
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
	if got := structured(t, res)["sum"]; got != 42.0 {
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
	wantToolError(t, res, "exited during the call")
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
		wantToolError(t, res, `the handler process of service "faulty" exited during the call`)
	}
	echoWorks(t, rt)
}

func TestBadResult(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	res := runtimetest.Call(t, rt, "bad_result", `{}`)
	wantToolError(t, res, "the handler of bad_result returned a result that breaks its contract", `"count"`, "integer")
	if res.StructuredContent != nil {
		t.Errorf("the broken structured content reached the caller: %s", res.StructuredContent)
	}
	echoWorks(t, rt)
}

func TestBigResult(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{MaxResultBytes: 4096}, runtimetest.StartFaulty(t))
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "big_result", `{"bytes": 4096}`))
	res := runtimetest.Call(t, rt, "big_result", `{"bytes": 4097}`)
	wantToolError(t, res, "the result of big_result is 4097 bytes, over the limit of 4096")
	if len(runtimetest.Text(res)) > 200 {
		t.Errorf("the tool error holds %d bytes", len(runtimetest.Text(res)))
	}
	// Far over the limit, the result is refused as it arrives from the
	// plugin, before the host reads it (see plugins/rpc's bounds), with
	// the same kind of error.
	res = runtimetest.Call(t, rt, "big_result", `{"bytes": 1048576}`)
	wantToolError(t, res, "the result of big_result is 10485", " bytes, over the limit of 4096; it was refused as it arrived, before the host read it")

	// The default limit, 4 MiB, well over gRPC's own default of 4 MB.
	rt = runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	res = runtimetest.Call(t, rt, "big_result", `{"bytes": 4194304}`)
	runtimetest.WantOK(t, res)
	if len(runtimetest.Text(res)) != 4<<20 {
		t.Errorf("big_result returned %d bytes", len(runtimetest.Text(res)))
	}
	wantToolError(t, runtimetest.Call(t, rt, "big_result", `{"bytes": 4194305}`), "over the limit of 4194304")
	echoWorks(t, rt)
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
		wantToolError(t, runtimetest.Call(t, rt, "crash", `{}`), "exited during the call")
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
	echoWorks(t, rt)
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
	p, err := host.StartPlugin(context.Background(), pluginrpc.ClientConfig{Service: "faulty", Path: script, Stderr: io.Discard}, nil)
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
