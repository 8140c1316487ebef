package toolcalls_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/toolcalls"
)

var png = []byte("\x89PNG\r\n\x1a\nfake")

// newRuntime serves testdata/forecast in-process. forecast answers JSON;
// radar answers an image. Radar of Oslo and of Bergen each wait (up to two
// seconds) until the other has started, so that a test can tell whether
// two calls ran at once.
func newRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{}, "./testdata/forecast")
	if err != nil {
		t.Fatal(err)
	}
	if res.HasErrors() {
		t.Fatal(res.Diagnostics)
	}
	var oslo, bergen atomic.Bool
	type req struct {
		City string `json:"city"`
	}
	handlers := runtime.Local(
		plugins.Handle("forecast", func(_ context.Context, r req) (*plugins.Result, error) {
			return plugins.JSON(map[string]string{"summary": "sunny in " + r.City})
		}),
		plugins.Handle("radar", func(_ context.Context, r req) (*plugins.Result, error) {
			var other *atomic.Bool
			switch r.City {
			case "Oslo":
				oslo.Store(true)
				other = &bergen
			case "Bergen":
				bergen.Store(true)
				other = &oslo
			}
			for deadline := time.Now().Add(2 * time.Second); other != nil && !other.Load() && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			return plugins.NewResult(plugins.TextContent("radar of "+r.City), plugins.ImageContent(png, "image/png")), nil
		}),
	)
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"forecast": handlers}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// marshal encodes a value of the SDKs' request types as the SDK sends it.
func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantEncoded compares what the SDK encodes for each value with want.
func wantEncoded[T any](t *testing.T, what string, got []T, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d %s, want %d", len(got), what, len(want))
	}
	for i := range want {
		if g := marshal(t, got[i]); g != want[i] {
			t.Errorf("%s %d:\n got %s\nwant %s", what, i, g, want[i])
		}
	}
}

func TestOpenAIChat(t *testing.T) {
	rt := newRuntime(t)
	// An assistant message as the Chat Completions API returns it.
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{
		"role": "assistant", "content": null, "refusal": null,
		"tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "forecast", "arguments": "{\"city\":\"Berlin\"}"}},
			{"id": "call_2", "type": "function", "function": {"name": "forecast", "arguments": "{\"city\":\"\"}"}},
			{"id": "call_3", "type": "function", "function": {"name": "horoscope", "arguments": "{}"}},
			{"id": "call_4", "type": "function", "function": {"name": "radar", "arguments": "{\"city\":\"Tromsø\"}"}},
			{"id": "call_5", "type": "custom", "custom": {"name": "grammar", "input": "x"}},
			{"id": "call_6", "type": "function", "function": {"name": "forecast", "arguments": "{\"city\": \"Par"}}
		]}`), &msg); err != nil {
		t.Fatal(err)
	}
	out, err := toolcalls.OpenAIChat(context.Background(), rt, msg.ToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"content":"{\"summary\":\"sunny in Berlin\"}","tool_call_id":"call_1","role":"tool"}`,
		`{"content":"invalid arguments for forecast: field \"city\" must be at least 1 character long, not 0","tool_call_id":"call_2","role":"tool"}`,
		`{"content":"there is no tool \"horoscope\"; call one of the tools you were given","tool_call_id":"call_3","role":"tool"}`,
		`{"content":"radar of Tromsø\n[image/png image, 12 bytes]","tool_call_id":"call_4","role":"tool"}`,
		`{"content":"tool \"grammar\" is a custom tool; only function tools are served here","tool_call_id":"call_5","role":"tool"}`,
		`{"content":"invalid arguments for forecast: the arguments are not valid JSON: a string is not closed with '\"', but the input ends","tool_call_id":"call_6","role":"tool"}`,
	}
	wantEncoded(t, "messages", out, want)
}

func TestOpenAIResponses(t *testing.T) {
	rt := newRuntime(t)
	var resp responses.Response
	if err := json.Unmarshal([]byte(`{
		"id": "resp_1", "object": "response", "status": "completed",
		"output": [
			{"type": "reasoning", "id": "rs_1", "summary": []},
			{"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "forecast", "arguments": "{\"city\":\"Rome\"}", "status": "completed"},
			{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]},
			{"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "forecast", "arguments": "{\"town\":\"Rome\"}", "status": "completed"},
			{"type": "function_call", "id": "fc_3", "call_id": "call_c", "name": "radar", "arguments": "{\"city\":\"Rome\"}", "status": "completed"}
		]}`), &resp); err != nil {
		t.Fatal(err)
	}
	out, err := toolcalls.OpenAIResponses(context.Background(), rt, resp.Output)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"output":"{\"summary\":\"sunny in Rome\"}","call_id":"call_a","type":"function_call_output"}`,
		`{"output":"invalid arguments for forecast: unknown field \"town\"; the fields are \"city\"; missing required field \"city\" (a string)","call_id":"call_b","type":"function_call_output"}`,
		`{"output":[{"text":"radar of Rome","type":"input_text"},{"image_url":"data:image/png;base64,iVBORw0KGgpmYWtl","type":"input_image"}],"call_id":"call_c","type":"function_call_output"}`,
	}
	wantEncoded(t, "items", out, want)
}

func TestAnthropic(t *testing.T) {
	rt := newRuntime(t)
	var msg anthropic.Message
	if err := json.Unmarshal([]byte(`{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"stop_reason": "tool_use",
		"content": [
			{"type": "text", "text": "Checking both."},
			{"type": "tool_use", "id": "toolu_1", "name": "radar", "input": {"city": "Oslo"}},
			{"type": "tool_use", "id": "toolu_2", "name": "radar", "input": {"city": "Bergen"}},
			{"type": "tool_use", "id": "toolu_3", "name": "forecast", "input": {"city": 7}}
		]}`), &msg); err != nil {
		t.Fatal(err)
	}
	out, err := toolcalls.Anthropic(context.Background(), rt, msg.Content)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"tool_use_id":"toolu_1","content":[{"text":"radar of Oslo","type":"text"},{"source":{"data":"iVBORw0KGgpmYWtl","media_type":"image/png","type":"base64"},"type":"image"}],"type":"tool_result"}`,
		`{"tool_use_id":"toolu_2","content":[{"text":"radar of Bergen","type":"text"},{"source":{"data":"iVBORw0KGgpmYWtl","media_type":"image/png","type":"base64"},"type":"image"}],"type":"tool_result"}`,
		`{"tool_use_id":"toolu_3","is_error":true,"content":[{"text":"invalid arguments for forecast: field \"city\" must be a string, not the number 7","type":"text"}],"type":"tool_result"}`,
	}
	wantEncoded(t, "blocks", out, want)
	// The blocks make a user message the SDK accepts.
	user := anthropic.NewUserMessage(out...)
	if got := marshal(t, user); !strings.HasPrefix(got, `{"content":[{"tool_use_id":"toolu_1"`) || !strings.Contains(got, `"role":"user"`) {
		t.Errorf("user message = %s", got)
	}
}

// TestCallsRunAtOnce: the two radar calls of one reply overlap; run one
// after the other, each would wait out its two seconds for the other.
func TestCallsRunAtOnce(t *testing.T) {
	rt := newRuntime(t)
	calls := []openai.ChatCompletionMessageToolCallUnion{
		{ID: "a", Type: "function", Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: "radar", Arguments: `{"city":"Oslo"}`}},
		{ID: "b", Type: "function", Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: "radar", Arguments: `{"city":"Bergen"}`}},
	}
	start := time.Now()
	if _, err := toolcalls.OpenAIChat(context.Background(), rt, calls); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("two calls took %s: they ran one after the other", took)
	}
}

// TestContextEnded: a reply whose context has ended gets an error, not
// answers that say the tools failed.
func TestContextEnded(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := []openai.ChatCompletionMessageToolCallUnion{
		{ID: "a", Type: "function", Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: "forecast", Arguments: `{"city":"Oslo"}`}},
	}
	if out, err := toolcalls.OpenAIChat(ctx, rt, calls); err == nil {
		t.Errorf("OpenAIChat with an ended context = %v, nil", out)
	}
}

func TestText(t *testing.T) {
	size := int64(5)
	res := plugins.NewResult(
		plugins.TextContent("a"),
		plugins.AudioContent([]byte("wav"), "audio/wav"),
		plugins.ResourceLink("file:///r.txt", "r.txt"),
		plugins.EmbeddedText("file:///e.txt", "text/plain", "embedded"),
		plugins.EmbeddedBlob("file:///b.bin", "application/octet-stream", []byte{1, 2}),
	)
	res.Content[2].Description = "a file"
	res.Content[2].Size = &size
	want := "a\n[audio/wav audio, 3 bytes]\n[resource file:///r.txt (r.txt): a file]\nembedded\n[resource file:///b.bin, application/octet-stream, 2 bytes]"
	if got := toolcalls.Text(res); got != want {
		t.Errorf("Text =\n%q\nwant\n%q", got, want)
	}
}
