package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// These tests run handlers in-process, as a service that embeds its
// catalog does.

func TestHandleDecodesIntoTheRequestType(t *testing.T) {
	type req struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	var got req
	h := Handle("forecast", func(_ context.Context, r req) (*Result, error) {
		got = r
		return Text("ok"), nil
	})
	if h.Tool() != "forecast" {
		t.Errorf("Tool() = %q", h.Tool())
	}
	if _, err := h.Call(context.Background(), json.RawMessage(`{"city":"Oslo","days":3}`)); err != nil {
		t.Fatal(err)
	}
	if got != (req{"Oslo", 3}) {
		t.Errorf("decoded %+v", got)
	}
	// No arguments at all decode to the zero request.
	if _, err := h.Call(context.Background(), nil); err != nil || got != (req{}) {
		t.Errorf("nil args: %+v, %v", got, err)
	}
}

func TestHandleRecoversPanics(t *testing.T) {
	h := Handle("boom", func(context.Context, struct{}) (*Result, error) { panic(errors.New("nil map")) })
	res, err := h.Call(context.Background(), json.RawMessage(`{}`))
	if err != nil || !res.IsError || res.Content[0].Text != "panic in tool boom: nil map" {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestHandlerErrorIsReturnedInProcess(t *testing.T) {
	h := Handle("down", func(context.Context, struct{}) (*Result, error) { return nil, errors.New("down") })
	if _, err := h.Call(context.Background(), nil); err == nil || err.Error() != "down" {
		t.Errorf("err = %v, want the handler's error", err)
	}
	// The plugin server turns it into a tool error.
	if res := Run(context.Background(), h, nil); !res.IsError || res.Content[0].Text != "down" {
		t.Errorf("Run = %+v", res)
	}
}

type panicky struct{}

func (panicky) Tool() string { return "raw" }
func (panicky) Call(context.Context, json.RawMessage) (*Result, error) {
	panic("unguarded")
}

func TestServerRecoversPanicsOfAnyHandler(t *testing.T) {
	if res := Run(context.Background(), panicky{}, nil); !res.IsError || !strings.Contains(res.Content[0].Text, "unguarded") {
		t.Errorf("Run = %+v", res)
	}
}

func TestJSONNeedsAnObject(t *testing.T) {
	if _, err := JSON([]int{1}); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
		t.Errorf("JSON([]int) err = %v", err)
	}
	if _, err := JSON(func() {}); err == nil {
		t.Error("JSON(func) succeeded")
	}
	res, err := JSON(struct {
		Temp float64 `json:"temp"`
	}{21.5})
	if err != nil || string(res.StructuredContent.(json.RawMessage)) != `{"temp":21.5}` || res.Content[0].Text != `{"temp":21.5}` {
		t.Errorf("JSON = %+v, %v", res, err)
	}
}

func TestEventsInProcess(t *testing.T) {
	// Without an emitter, reporting is a no-op.
	Progress(context.Background(), 1, 2, "x")
	Log(context.Background(), "info", "x")

	var got []Event
	ctx := WithEvents(context.Background(), func(e Event) { got = append(got, e) })
	Progress(ctx, 1, 2, "half")
	Log(ctx, "debug", "detail")
	if len(got) != 2 || *got[0].Progress != (ProgressEvent{1, 2, "half"}) || *got[1].Log != (LogEvent{Level: "debug", Message: "detail"}) {
		t.Errorf("events = %+v", got)
	}
	if id := CallID(WithCallID(ctx, "c1")); id != "c1" {
		t.Errorf("CallID = %q", id)
	}
}
