package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/runtime"

	"github.com/toolc/toolc/internal/runtimetest"
)

func TestPanicIsAToolError(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	pid := p.Pid()
	res := runtimetest.Call(t, rt, "panic", `{}`)
	runtimetest.WantToolError(t, res, "panic in tool panic: deliberate panic in faulty")
	// The stack went to the operator's stderr, not to the model.
	if strings.Contains(runtimetest.Text(res), "goroutine") {
		t.Errorf("the tool error shows the stack: %s", runtimetest.Text(res))
	}
	runtimetest.EchoWorks(t, rt)
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
			runtimetest.WantToolError(t, res, tool+" did not finish within 200ms and was cancelled")
			// The bounds below tell "returned on the timeout" from
			// "waited for the handler", which sleeps or hangs for a
			// minute: they are far from both, so that a -race run on a
			// loaded machine (load 20 on 2 cores in CI) passes them.
			if took > 20*time.Second {
				t.Errorf("the timed-out call returned after %s", took)
			}
			// The plugin answers the next call at once, the hanging
			// handler notwithstanding.
			start = time.Now()
			runtimetest.EchoWorks(t, rt)
			if took := time.Since(start); took > 20*time.Second {
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
	runtimetest.EchoWorks(t, rt)
}

func TestBadResult(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	res := runtimetest.Call(t, rt, "bad_result", `{}`)
	runtimetest.WantToolError(t, res, "the handler of bad_result returned a result that breaks its contract", `"count"`, "integer")
	if res.StructuredContent != nil {
		t.Errorf("the broken structured content reached the caller: %s", res.StructuredContent)
	}
	runtimetest.EchoWorks(t, rt)
}

func TestBigResult(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{MaxResultBytes: 4096}, runtimetest.StartFaulty(t))
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "big_result", `{"bytes": 4096}`))
	res := runtimetest.Call(t, rt, "big_result", `{"bytes": 4097}`)
	runtimetest.WantToolError(t, res, "the result of big_result is 4097 bytes, over the limit of 4096")
	if len(runtimetest.Text(res)) > 200 {
		t.Errorf("the tool error holds %d bytes", len(runtimetest.Text(res)))
	}
	// Far over the limit, the result is refused as it arrives from the
	// plugin, before the host reads it (see plugins/rpc's bounds), with
	// the same kind of error.
	res = runtimetest.Call(t, rt, "big_result", `{"bytes": 1048576}`)
	runtimetest.WantToolError(t, res, "the result of big_result is 10485", " bytes, over the limit of 4096; it was refused as it arrived, before the host read it")

	// The default limit, 4 MiB, well over gRPC's own default of 4 MB.
	rt = runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	res = runtimetest.Call(t, rt, "big_result", `{"bytes": 4194304}`)
	runtimetest.WantOK(t, res)
	if len(runtimetest.Text(res)) != 4<<20 {
		t.Errorf("big_result returned %d bytes", len(runtimetest.Text(res)))
	}
	runtimetest.WantToolError(t, runtimetest.Call(t, rt, "big_result", `{"bytes": 4194305}`), "over the limit of 4194304")
	runtimetest.EchoWorks(t, rt)
}
