package toolcalls_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/toolcalls"
)

// TestOpenAIChatStrictNulls runs a reply shaped as OpenAI's strict mode
// sends it: every property present, null for each optional one the model
// leaves out. The tool's strict projection advertises those as
// [T, "null"]; the runtime reads the nulls as absent, so the defaults
// apply and the handler sees a nil slice for hours.
func TestOpenAIChatStrictNulls(t *testing.T) {
	res, err := compiler.Compile(compiler.Config{}, "./testdata/outlook")
	if err != nil || res.HasErrors() {
		t.Fatal(err, res.Diagnostics)
	}
	// The arguments a strict-mode model writes: the projection's
	// properties, null where null is allowed, a value for the rest.
	proj, err := res.Catalog.ProjectJSON(catalog.OpenAIChat, catalog.ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tools []openai.ChatCompletionFunctionToolParam
	if err := json.Unmarshal(proj, &tools); err != nil {
		t.Fatal(err)
	}
	fn := tools[0].Function
	if !fn.Strict.Value {
		t.Fatalf("projection of a strict tool is not strict: %s", proj)
	}
	var params struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	raw, _ := json.Marshal(fn.Parameters)
	if err := json.Unmarshal(raw, &params); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{}
	for name, p := range params.Properties {
		if !slices.Contains(params.Required, name) {
			t.Fatalf("strict projection leaves %q out of required: %s", name, raw)
		}
		types, _ := p.Type.([]any)
		if slices.Contains(types, any("null")) {
			args[name] = nil
		} else {
			args[name] = "Berlin"
		}
	}
	if len(args) != 4 || args["city"] != "Berlin" {
		t.Fatalf("want city given and three optional fields null, got %v from %s", args, raw)
	}
	argText, _ := json.Marshal(args)

	// The reply, decoded into openai-go's types as the client does.
	reply, _ := json.Marshal(map[string]any{
		"role": "assistant", "content": nil, "refusal": nil,
		"tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function",
			"function": map[string]any{"name": "outlook", "arguments": string(argText)},
		}},
	})
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal(reply, &msg); err != nil {
		t.Fatal(err)
	}
	type req struct {
		City  string `json:"city"`
		Days  int    `json:"days"`
		Unit  string `json:"unit"`
		Hours []int  `json:"hours"`
	}
	var got req
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"outlook": runtime.Local(
		plugins.Handle("outlook", func(_ context.Context, r req) (*plugins.Result, error) {
			got = r
			return plugins.Text("ok"), nil
		}),
	)}); err != nil {
		t.Fatal(err)
	}
	out, err := toolcalls.OpenAIChat(context.Background(), rt, msg.ToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	wantEncoded(t, "messages", out, []string{`{"content":"ok","tool_call_id":"call_1","role":"tool"}`})
	if want := (req{City: "Berlin", Days: 3, Unit: "celsius"}); got.City != want.City || got.Days != want.Days || got.Unit != want.Unit || got.Hours != nil {
		t.Errorf("handler got %+v, want %+v (defaults for the nulls, hours nil)", got, want)
	}

	// A required field still rejects null.
	msg.ToolCalls[0].Function.Arguments = `{"city":null,"days":null,"unit":null,"hours":null}`
	out, err = toolcalls.OpenAIChat(context.Background(), rt, msg.ToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	wantEncoded(t, "messages", out, []string{`{"content":"invalid arguments for outlook: field \"city\" must be a string, not null","tool_call_id":"call_1","role":"tool"}`})
}
