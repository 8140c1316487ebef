// Command faulty is the handler plugin of the faulty service: one tool per
// way a handler can fail, for the runtime's integration and fault tests.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/toolc/toolc/plugins"
)

type echoReq struct {
	Text string `json:"text"`
	// A pointer, so that the handler can tell whether the runtime applied
	// the contract's default: the handler has none of its own.
	Times *int `json:"times"`
}

// recordMu serialises appends to the record file.
var recordMu sync.Mutex

func main() {
	// FAULTY_CPUPROFILE profiles the plugin's side of the benchmarks, until
	// the host stops it.
	if name := os.Getenv("FAULTY_CPUPROFILE"); name != "" {
		f, err := os.Create(name)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	plugins.Serve(
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
		plugins.Handle("sleep", func(ctx context.Context, req struct{ Ms int }) (*plugins.Result, error) {
			plugins.Progress(ctx, 0, 0, "sleeping")
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
	)
}
