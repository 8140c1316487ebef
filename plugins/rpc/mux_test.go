package rpc

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
	"testing"
	"time"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCallsStream: a plugin of version 5 takes every call over its one
// Calls stream: calls at once each get their own answer; a cancelled call
// ends alone, and the plugin's handler sees the cancellation; a call with
// another result limit than the stream's takes a Call RPC of its own.
func TestCallsStream(t *testing.T) {
	c, stderr := startToolbox(t)
	ctx := plugins.WithResultLimit(context.Background(), 1<<20)

	// A call that waits until cancelled, in flight through the rest.
	waitCtx, cancelWait := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := c.Call(waitCtx, "wait", "waiting", json.RawMessage(`{}`), nil)
		waited <- err
	}()

	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			msg := fmt.Sprintf("call %d", i)
			res, err := c.Call(ctx, "say", "c", json.RawMessage(`{"Message":"`+msg+`"}`), nil)
			if err != nil || text(res) != msg {
				t.Errorf("%s: %v, %v", msg, text(res), err)
			}
		})
	}
	wg.Wait()
	c.muxMu.Lock()
	m := c.mux
	c.muxMu.Unlock()
	if m == nil {
		t.Fatal("no Calls stream after 33 calls to a plugin of version 5")
	}
	m.mu.Lock()
	started := m.next
	m.mu.Unlock()
	if started != 33 {
		t.Errorf("%d calls started on the stream, want 33", started)
	}

	cancelWait()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call: %v, want context.Canceled", err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "call waiting observed context canceled"); {
		if time.Now().After(deadline) {
			t.Fatalf("the handler never saw the cancellation; stderr: %s", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res, err := c.Call(ctx, "say", "c", json.RawMessage(`{"Message":"after"}`), nil); err != nil || text(res) != "after" {
		t.Errorf("after the cancellation: %v, %v", text(res), err)
	}

	// Without a limit, the call is not bounded by the stream's 1 MiB: it
	// takes a Call RPC.
	if res, err := c.Call(context.Background(), "big", "c", json.RawMessage(`{"Bytes":2097152}`), nil); err != nil || len(text(res)) != 2<<20 {
		t.Errorf("2 MiB without a limit: %v", err)
	}
	m.mu.Lock()
	started = m.next
	m.mu.Unlock()
	if started != 34 {
		t.Errorf("%d calls started on the stream, want 34 (33, the call after the cancellation, and not the one without a limit)", started)
	}
}

// TestCallsStreamPluginDies: the calls in flight on the stream when the
// plugin dies each end with an error that says it exited.
func TestCallsStreamPluginDies(t *testing.T) {
	c, _ := startToolbox(t)
	call(t, c, "say", `{"Message":"open the stream"}`)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := c.Call(context.Background(), "wait", "c", json.RawMessage(`{}`), nil)
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	c.KillNow()
	for range 4 {
		select {
		case err := <-errs:
			if err == nil || !strings.Contains(err.Error(), "plugin exited: true") {
				t.Errorf("a call in flight when the plugin died: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call in flight did not end when the plugin died")
		}
	}
}

// TestCallsStreamDeadline: the call's deadline reaches the handler over
// the stream, as over a Call RPC.
func TestCallsStreamDeadline(t *testing.T) {
	c, _ := startToolbox(t)
	ctx, cancel := context.WithTimeout(plugins.WithResultLimit(context.Background(), 1<<20), time.Minute)
	defer cancel()
	res, err := c.Call(ctx, "deadline", "c", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		HasDeadline bool  `json:"has_deadline"`
		RemainingMS int64 `json:"remaining_ms"`
	}
	if err := json.Unmarshal([]byte(text(res)), &got); err != nil || !got.HasDeadline || got.RemainingMS < 50_000 || got.RemainingMS > 60_000 {
		t.Errorf("the handler saw %s (%v)", text(res), err)
	}
	if c.mux == nil {
		t.Error("the call did not take the Calls stream")
	}
}

// TestTracedCallsStream: a traced call takes the Calls stream to a plugin
// of version 7, with its trace context in the request, and the handler's
// context has the host's span; to a plugin of version 6 it takes a Call
// RPC, with the trace context in the RPC's metadata and not in the
// request, which that plugin does not know.
func TestTracedCallsStream(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
		SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(plugins.WithResultLimit(context.Background(), 1<<20), sc)

	c, _ := startToolbox(t)
	for range 2 {
		res, err := c.Call(ctx, "trace", "c", json.RawMessage(`{}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"span_id":"b7ad6b7169203331","trace_id":"0af7651916cd43dd8448eb211c80319c"}`; text(res) != want {
			t.Errorf("the handler saw %s, want %s", text(res), want)
		}
	}
	c.muxMu.Lock()
	m := c.mux
	c.muxMu.Unlock()
	if m == nil || m.next != 2 {
		t.Fatal("the traced calls did not take the Calls stream")
	}

	dumpFile := filepath.Join(t.TempDir(), "dump")
	old, _ := startToolbox(t, func(cfg *ClientConfig) {
		cfg.Path, cfg.Args = filepath.Join(bin, "raw"), []string{"-protocol", "6", "-dump", dumpFile}
	})
	if _, err := old.Call(ctx, "say", "c", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	dump, err := os.ReadFile(dumpFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dump), "traceparent:[00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01]") {
		t.Errorf("a plugin of version 6 got no traceparent in the Call RPC's metadata:\n%s", dump)
	}
	if n := strings.Count(string(dump), "0af7651916cd43dd8448eb211c80319c"); n != 1 {
		t.Errorf("the trace ID is %d times in what a plugin of version 6 got, want once (the metadata, not the request):\n%s", n, dump)
	}
}

// TestCallsUnimplemented: a plugin that agrees on version 5 but serves no
// Calls (the generated server alone) gets its calls as Call RPCs.
func TestCallsUnimplemented(t *testing.T) {
	c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Path, cfg.Args = filepath.Join(bin, "raw"), []string{"-protocol", "5"} })
	ctx := plugins.WithResultLimit(context.Background(), 1<<20)
	for range 2 {
		res, err := c.Call(ctx, "say", "c", json.RawMessage(`{"Message":"hi"}`), nil)
		if err != nil || res.Content[0].Text != `{"Message":"hi"}` {
			t.Fatalf("say: %+v, %v", res, err)
		}
	}
	if !c.noMux.Load() {
		t.Error("the client still tries the Calls stream")
	}
}

// TestMuxStartOnEndedStream: a call started on a Calls stream that the
// plugin has already ended gets the stream's status, not the io.EOF that
// gRPC's Send reports for it. With a plugin that serves no Calls, that
// status is Unimplemented, on which the call falls back to a Call RPC; an
// io.EOF failed the call (TestCallerProtocolVersions, in a CI run whose
// receive goroutine was slower than the start).
func TestMuxStartOnEndedStream(t *testing.T) {
	c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Path, cfg.Args = filepath.Join(bin, "raw"), []string{"-protocol", "6"} })
	ctx, end := context.WithCancel(context.Background())
	stream, err := c.rpc.Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := &mux{limit: 1 << 20, stream: stream, end: end, calls: map[uint64]*muxCall{}}
	// Wait, with no receive running, until the plugin's status is in:
	// from then on Send reports io.EOF.
	for deadline := time.Now().Add(10 * time.Second); stream.Send(&pb.CallFrame{}) != io.EOF; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the plugin never ended the stream")
		}
	}
	call, _, err := m.start(&pb.CallRequest{Tool: "say", ArgumentsJson: []byte(`{}`)})
	if err != nil {
		t.Fatalf("start = %v, want the call registered to hear the stream's status", err)
	}
	go m.receive()
	select {
	case <-call.wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never heard how the stream ended")
	}
	if _, err := call.take(nil); status.Code(err) != codes.Unimplemented {
		t.Errorf("the call got %v, want Unimplemented", err)
	}
}
