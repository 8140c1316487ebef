package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/plugins"
)

// TestResultLimitRefusesAsItArrives: under a result limit, a message over
// it is refused from its header, as a *plugins.ResultTooLargeError that
// gives its size, and the plugin serves the next call as before.
func TestResultLimitRefusesAsItArrives(t *testing.T) {
	c, _ := startToolbox(t)
	ctx := plugins.WithResultLimit(context.Background(), 64<<10)
	res, err := c.Call(ctx, "big", "c1", json.RawMessage(`{"Bytes":65536}`), nil)
	if err != nil || len(text(res)) != 64<<10 {
		t.Fatalf("a result at the limit: %v", err)
	}
	_, err = c.Call(ctx, "big", "c2", json.RawMessage(`{"Bytes":4194304}`), nil)
	var tooLarge *plugins.ResultTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 64<<10 || tooLarge.Size < 4<<20 || tooLarge.Size > 4<<20+64 {
		t.Fatalf("a result of 4 MiB under a limit of 64 KiB: %v", err)
	}
	if want := "the handler sent a message of "; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	if got := text(call(t, c, "say", `{"Message":"after"}`)); got != "after" || c.Exited() {
		t.Errorf("the call after: %q, exited %t", got, c.Exited())
	}
	// Without a limit, the transport's own bound holds, as before.
	if res, err := c.Call(context.Background(), "big", "c3", json.RawMessage(`{"Bytes":4194304}`), nil); err != nil || len(text(res)) != 4<<20 {
		t.Errorf("a result of 4 MiB without a limit: %v", err)
	}
}

// TestEventsAreBounded: a handler that floods its call with long log and
// progress events reaches the host's onEvent at the gate's rate, each
// message cut, and the client is told how many were dropped; the result
// arrives as ever.
func TestEventsAreBounded(t *testing.T) {
	c, _ := startToolbox(t)
	var got []plugins.Event
	begin := time.Now()
	res, err := c.Call(context.Background(), "flood", "c", json.RawMessage(`{"Events":1000,"Bytes":20000}`), func(e plugins.Event) { got = append(got, e) })
	took := time.Since(begin)
	if err != nil || text(res) != "flooded" {
		t.Fatalf("flood = %v, %v", res, err)
	}
	if len(got) == 0 {
		t.Fatal("no events")
	}
	passed := len(got) - 1
	if max := eventBurst + int(took.Seconds()*eventsPerSecond) + 1; passed > max || passed < eventBurst {
		t.Errorf("%d events passed in %v, want between %d and %d", passed, took, eventBurst, max)
	}
	for _, e := range got[:passed] {
		msg := ""
		if e.Log != nil {
			msg = e.Log.Message
		} else {
			msg = e.Progress.Message
		}
		if len(msg) > maxEventMessage+32 || !strings.HasSuffix(msg, "… [3616 bytes cut]") {
			t.Fatalf("an event of %d bytes passed: %.40q...%q", len(msg), msg, msg[max(0, len(msg)-30):])
		}
	}
	last := got[passed].Log
	want := "toolc dropped " + itoa(1000-passed) + " log and progress events of this call from the handler of service \"toolbox\": a call may send 100 a second, after a first 256"
	if last == nil || last.Message != want || last.Level != "warning" || last.Logger != "toolc" {
		t.Errorf("the last event = %+v, want the warning %q", last, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
