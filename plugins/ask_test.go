package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestAskInProcess checks the SDK's bookkeeping without a plugin.
func TestAskInProcess(t *testing.T) {
	form := Form{Message: "m", Schema: json.RawMessage(`{"type":"object"}`)}
	t.Run("no input", func(t *testing.T) {
		_, err := Elicit(context.Background(), "q", form)
		var mc *MissingCapabilityError
		if !errors.Is(err, ErrMissingCapability) || !errors.As(err, &mc) || mc.Capability != "elicitation" {
			t.Errorf("Elicit without input = %v", err)
		}
	})
	t.Run("asked twice, differently", func(t *testing.T) {
		ctx := WithInput(context.Background(), &Input{Elicitation: true})
		if _, err := Elicit(ctx, "q", form); !errors.Is(err, ErrInputRequired) {
			t.Fatalf("first ask = %v", err)
		}
		if _, err := Elicit(ctx, "q", form); !errors.Is(err, ErrInputRequired) {
			t.Errorf("same question again = %v", err)
		}
		other := Form{Message: "other", Schema: form.Schema}
		if _, err := Elicit(ctx, "q", other); err == nil || errors.Is(err, ErrInputRequired) {
			t.Errorf("another question under the same id = %v", err)
		}
		if res := Finish(ctx, Text("ignored"), nil); len(res.InputRequests) != 1 || len(res.Content) != 0 {
			t.Errorf("Finish = %+v: the pending question wins over what the handler returned", res)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		ctx := WithInput(context.Background(), &Input{Elicitation: true, Sampling: true, Roots: true})
		if _, err := Elicit(ctx, "", form); err == nil {
			t.Error("a question without an id was asked")
		}
		if _, err := Elicit(ctx, "q", Form{Message: "no schema"}); err == nil {
			t.Error("a form without a schema was asked")
		}
		if _, err := Sample(ctx, "s", SampleRequest{}); err == nil {
			t.Error("an empty sampling request was asked")
		}
		if res := Finish(ctx, nil, nil); len(res.InputRequests) != 0 {
			t.Errorf("bad requests were recorded: %+v", res.InputRequests)
		}
	})
	t.Run("malformed answer", func(t *testing.T) {
		q := InputRequest{Params: mustJSON(t, struct {
			Mode string `json:"mode"`
			Form
		}{"form", form})}
		ctx := WithInput(context.Background(), &Input{Elicitation: true, Answers: []Answer{{ID: "q", ParamsSHA256: q.ParamsHash(), Result: json.RawMessage(`[1]`)}}})
		if _, err := Elicit(ctx, "q", form); err == nil || errors.Is(err, ErrInputRequired) {
			t.Errorf("malformed answer = %v", err)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
