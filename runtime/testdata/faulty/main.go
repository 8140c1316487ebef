// Command faulty is the handler plugin of the faulty service: one tool per
// way a handler can fail, for the runtime's integration and fault tests.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/plugins/rpc"
)

type echoReq struct {
	Text string `json:"text"`
	// A pointer, so that the handler can tell whether the runtime applied
	// the contract's default: the handler has none of its own.
	Times *int `json:"times"`
}

// recordMu serialises appends to the record file.
var recordMu sync.Mutex

// leaked holds what the leak tool leaks, so that the collector cannot
// free it.
var leaked [][]byte

func main() {
	// The grandchild tool starts this binary again as a process that only
	// sleeps: a handler's child process, which must not outlive the
	// plugin.
	if os.Getenv("FAULTY_GRANDCHILD") != "" {
		time.Sleep(10 * time.Minute)
		return
	}
	// A plugin that fails before it serves, as a broken init or main does.
	if os.Getenv("FAULTY_PANIC_AT_START") != "" {
		fmt.Fprintln(os.Stderr, "faulty: reading the configuration")
		panic("deliberate panic at start")
	}
	// FAULTY_CPUPROFILE profiles the plugin's side of the benchmarks, until
	// the host stops it.
	if name := os.Getenv("FAULTY_CPUPROFILE"); name != "" {
		f, err := os.Create(name)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	rpc.Serve(
		plugins.Handle("echo", func(_ context.Context, req echoReq) (*plugins.Result, error) {
			if req.Times == nil {
				return plugins.Errorf("times is missing: the runtime did not apply its default"), nil
			}
			return plugins.JSON(map[string]any{"echo": strings.Repeat(req.Text, *req.Times), "times": *req.Times})
		}),
		plugins.Handle("say", func(_ context.Context, req struct {
			Text string `json:"text"`
		}) (*plugins.Result, error) {
			return plugins.Text(req.Text), nil
		}),
		plugins.Handle("record", func(_ context.Context, args json.RawMessage) (*plugins.Result, error) {
			name := os.Getenv("FAULTY_RECORD")
			if name == "" {
				return plugins.Errorf("FAULTY_RECORD is not set"), nil
			}
			recordMu.Lock()
			defer recordMu.Unlock()
			f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if _, err := f.Write(append(args, '\n')); err != nil {
				return nil, err
			}
			return plugins.Text("recorded"), nil
		}),
		plugins.Handle("panic", func(context.Context, struct{}) (*plugins.Result, error) {
			panic("deliberate panic in faulty")
		}),
		plugins.Handle("sleep", func(ctx context.Context, req struct {
			Ms   int
			Hold string
		}) (*plugins.Result, error) {
			plugins.Progress(ctx, 0, 0, "sleeping")
			if req.Hold != "" {
				if err := hold(ctx, req.Hold); err != nil {
					return nil, err
				}
			}
			select {
			case <-time.After(time.Duration(req.Ms) * time.Millisecond):
				return plugins.Text(fmt.Sprintf("slept %dms", req.Ms)), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}),
		plugins.Handle("hang", func(_ context.Context, req struct{ Ms int }) (*plugins.Result, error) {
			time.Sleep(time.Duration(req.Ms) * time.Millisecond)
			return plugins.Text(fmt.Sprintf("hung for %dms", req.Ms)), nil
		}),
		plugins.Handle("crash", func(ctx context.Context, req struct{ Code int }) (*plugins.Result, error) {
			plugins.Log(ctx, "error", "about to exit")
			time.Sleep(20 * time.Millisecond) // let the log line leave
			os.Exit(req.Code)
			return nil, nil
		}),
		plugins.Handle("bad_result", func(context.Context, struct{}) (*plugins.Result, error) {
			return plugins.JSON(map[string]any{"count": "many"})
		}),
		plugins.Handle("progress", func(ctx context.Context, req struct{ Steps int }) (*plugins.Result, error) {
			for i := 1; i <= req.Steps; i++ {
				plugins.Progress(ctx, float64(i), float64(req.Steps), fmt.Sprintf("step %d", i))
				plugins.Log(ctx, "info", fmt.Sprintf("log %d", i))
			}
			return plugins.Text(fmt.Sprintf("did %d steps", req.Steps)), nil
		}),
		plugins.Handle("big_result", func(_ context.Context, req struct{ Bytes int }) (*plugins.Result, error) {
			return plugins.Text(strings.Repeat("x", req.Bytes)), nil
		}),
		plugins.Handle("trace_context", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			sc := trace.SpanContextFromContext(ctx)
			out := map[string]string{"trace_id": "", "span_id": ""}
			if sc.IsValid() {
				out["trace_id"], out["span_id"] = sc.TraceID().String(), sc.SpanID().String()
			}
			return plugins.JSON(out)
		}),
		plugins.Handle("ping", func(context.Context, struct{}) (*plugins.Result, error) {
			return plugins.Text("pong"), nil
		}),
		plugins.Handle("stdout", func(_ context.Context, req struct{ Text string }) (*plugins.Result, error) {
			// File descriptor 1 itself, past go-plugin's os.Stdout: what
			// cgo code, a raw syscall or a careless child process writes.
			if _, err := syscall.Write(1, []byte(req.Text)); err != nil {
				return nil, err
			}
			return plugins.Text("wrote to fd 1"), nil
		}),
		plugins.Handle("flood_stderr", func(_ context.Context, req struct{ Lines int }) (*plugins.Result, error) {
			line := []byte(strings.Repeat("flood ", 20) + "\n")
			for range req.Lines {
				if _, err := syscall.Write(2, line); err != nil {
					return nil, err
				}
			}
			return plugins.Text(fmt.Sprintf("wrote %d lines to fd 2", req.Lines)), nil
		}),
		plugins.Handle("leak", func(_ context.Context, req struct{ Goroutines, Kib int }) (*plugins.Result, error) {
			for range req.Goroutines {
				go func() { select {} }()
			}
			for range req.Kib {
				leaked = append(leaked, make([]byte, 1024))
			}
			return plugins.Text(fmt.Sprintf("leaked %d goroutines and %d KiB", req.Goroutines, req.Kib)), nil
		}),
		plugins.Handle("bad_utf8", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			plugins.Log(ctx, "info", "log line with invalid UTF-8: \xff\xfe")
			return plugins.Text("caf\xe9 au lait \xff"), nil
		}),
		plugins.Handle("bad_utf8_error", func(context.Context, struct{}) (*plugins.Result, error) {
			return nil, fmt.Errorf("no such file: caf\xe9")
		}),
		plugins.Handle("grandchild", func(context.Context, struct{}) (*plugins.Result, error) {
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), "FAULTY_GRANDCHILD=1")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			// Reap it if it ever ends, so that it is not left a zombie
			// while the plugin lives.
			go cmd.Wait()
			return plugins.JSON(map[string]int{"pid": cmd.Process.Pid})
		}),
	)
}

// hold tells a test that a call is in flight, with a file started-* in
// dir, and waits until the test lets it go on, with a file named release
// there: a test that needs calls in flight at a moment of its choosing
// (a SIGTERM, a drain) then needs no guess at how long they take to
// arrive.
func hold(ctx context.Context, dir string) error {
	f, err := os.CreateTemp(dir, "started-*")
	if err != nil {
		return err
	}
	f.Close()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
