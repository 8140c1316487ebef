package toolcalls_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/toolcalls"
)

// newDeferredRuntime serves testdata/deferred in-process: forecast is
// loaded up front, radar (in the deferred group maps) and tides are
// deferred.
func newDeferredRuntime(t *testing.T) (*runtime.Runtime, *catalog.Catalog) {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{}, "./testdata/deferred")
	if err != nil {
		t.Fatal(err)
	}
	if res.HasErrors() {
		t.Fatal(res.Diagnostics)
	}
	type city struct {
		City string `json:"city"`
	}
	type harbour struct {
		Harbour string `json:"harbour"`
	}
	handlers := runtime.Local(
		plugins.Handle("forecast", func(_ context.Context, r city) (*plugins.Result, error) {
			return plugins.NewResult(plugins.TextContent("sunny in " + r.City)), nil
		}),
		plugins.Handle("radar", func(_ context.Context, r city) (*plugins.Result, error) {
			return plugins.NewResult(plugins.TextContent("radar of "+r.City), plugins.ImageContent(png, "image/png")), nil
		}),
		plugins.Handle("tides", func(_ context.Context, r harbour) (*plugins.Result, error) {
			return plugins.NewResult(plugins.TextContent("high tide at " + r.Harbour + " 06:12")), nil
		}),
	)
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"weather": handlers}); err != nil {
		t.Fatal(err)
	}
	return rt, res.Catalog
}

// projected returns the names of the tools (and of the namespaces'
// functions) that target's projection of cat gives a model.
func projected(t *testing.T, cat *catalog.Catalog, target catalog.Target) []string {
	t.Helper()
	data, err := cat.ProjectJSON(target, catalog.ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	switch target {
	case catalog.OpenAIChat:
		var tools []openai.ChatCompletionFunctionToolParam
		if err := json.Unmarshal(data, &tools); err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			names = append(names, tl.Function.Name)
		}
	case catalog.OpenAIResponses:
		var tools []responses.ToolUnion
		if err := json.Unmarshal(data, &tools); err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			switch tl.Type {
			case "namespace":
				for _, f := range tl.AsNamespace().Tools {
					names = append(names, tl.Name+"."+f.Name)
				}
			default:
				names = append(names, tl.Type+":"+tl.Name)
			}
		}
	case catalog.Anthropic:
		var tools []struct {
			Type, Name   string
			DeferLoading bool `json:"defer_loading"`
		}
		if err := json.Unmarshal(data, &tools); err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			if tl.DeferLoading {
				tl.Name += " (deferred)"
			}
			names = append(names, tl.Name)
		}
	}
	return names
}

// TestDeferredOpenAIChat: Chat Completions has no deferred loading, so its
// projection gives the model forecast and toolc's two tools; the model
// searches with one, calls what it found with the other, and OpenAIChat
// answers both from the runtime.
func TestDeferredOpenAIChat(t *testing.T) {
	rt, cat := newDeferredRuntime(t)
	if got, want := projected(t, cat, catalog.OpenAIChat), []string{"forecast", catalog.SearchToolName, catalog.CallToolName}; !slices.Equal(got, want) {
		t.Fatalf("openai-chat projects %v, want %v", got, want)
	}
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{
		"role": "assistant", "content": null, "refusal": null,
		"tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "toolc_search_tools", "arguments": "{\"query\":\"rain radar image\",\"limit\":1}"}},
			{"id": "call_2", "type": "function", "function": {"name": "toolc_search_tools", "arguments": "{\"query\":\"when is high tide\"}"}}
		]}`), &msg); err != nil {
		t.Fatal(err)
	}
	out, err := toolcalls.OpenAIChat(context.Background(), rt, msg.ToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	found := []string{marshal(t, out[0]), marshal(t, out[1])}
	if !strings.Contains(found[0], `"content":"radar (MCP name weather_radar): The rain radar image of a city\nInput schema: {`) || strings.Contains(found[0], "tides") {
		t.Errorf("searching for the radar (limit 1) answered %s", found[0])
	}
	if !strings.HasPrefix(found[1], `{"content":"tides (MCP name weather_tides): High and low tide times at a harbour`) {
		t.Errorf("searching for the tides answered %s", found[1])
	}

	// The model calls what it found through toolc_call_tool.
	msg = openai.ChatCompletionMessage{}
	if err := json.Unmarshal([]byte(`{
		"role": "assistant", "content": null, "refusal": null,
		"tool_calls": [
			{"id": "call_3", "type": "function", "function": {"name": "toolc_call_tool", "arguments": "{\"name\":\"radar\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}"}},
			{"id": "call_4", "type": "function", "function": {"name": "toolc_call_tool", "arguments": "{\"name\":\"tides\",\"arguments\":\"{\\\"harbour\\\":\\\"\\\"}\"}"}},
			{"id": "call_5", "type": "function", "function": {"name": "toolc_call_tool", "arguments": "{\"name\":\"toolc_search_tools\",\"arguments\":\"{}\"}"}}
		]}`), &msg); err != nil {
		t.Fatal(err)
	}
	if out, err = toolcalls.OpenAIChat(context.Background(), rt, msg.ToolCalls); err != nil {
		t.Fatal(err)
	}
	wantEncoded(t, "messages", out, []string{
		`{"content":"radar of Oslo\n[image/png image, 12 bytes]","tool_call_id":"call_3","role":"tool"}`,
		`{"content":"invalid arguments for tides: field \"harbour\" must be at least 1 character long, not 0","tool_call_id":"call_4","role":"tool"}`,
		`{"content":"toolc_call_tool calls the catalog's tools, not \"toolc_search_tools\"","tool_call_id":"call_5","role":"tool"}`,
	})
}

// TestDeferredOpenAIResponses: the Responses API searches on its side
// (tool_search_call and tool_search_output items, which OpenAIResponses
// skips) and then calls the deferred function inside its namespace;
// OpenAIResponses answers it by its name. toolc's own search and call
// tools, which the Responses projection does not need, answer there too.
func TestDeferredOpenAIResponses(t *testing.T) {
	rt, cat := newDeferredRuntime(t)
	if got, want := projected(t, cat, catalog.OpenAIResponses), []string{"function:forecast", "maps.radar", "function:tides", "tool_search:"}; !slices.Equal(got, want) {
		t.Fatalf("openai-responses projects %v, want %v", got, want)
	}
	var resp responses.Response
	if err := json.Unmarshal([]byte(`{
		"id": "resp_1", "object": "response", "status": "completed",
		"output": [
			{"type": "tool_search_call", "id": "tsc_1", "call_id": "ts_1", "execution": "server", "status": "completed", "arguments": {"paths": ["maps"]}},
			{"type": "tool_search_output", "id": "tso_1", "call_id": "ts_1", "execution": "server", "status": "completed",
			 "tools": [{"type": "namespace", "name": "maps", "description": "Weather maps and images", "tools": [
				{"type": "function", "name": "radar", "description": "The rain radar image of a city", "defer_loading": true,
				 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}]},
			{"type": "function_call", "id": "fc_1", "call_id": "call_a", "namespace": "maps", "name": "radar", "arguments": "{\"city\":\"Rome\"}", "status": "completed"},
			{"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "tides", "arguments": "{\"harbour\":\"Bergen\"}", "status": "completed"},
			{"type": "function_call", "id": "fc_3", "call_id": "call_c", "name": "toolc_search_tools", "arguments": "{\"query\":\"tide times\",\"limit\":1}", "status": "completed"},
			{"type": "function_call", "id": "fc_4", "call_id": "call_d", "name": "toolc_call_tool", "arguments": "{\"name\":\"tides\",\"arguments\":\"{\\\"harbour\\\":\\\"Hull\\\"}\"}", "status": "completed"}
		]}`), &resp); err != nil {
		t.Fatal(err)
	}
	if fc := resp.Output[2].AsFunctionCall(); fc.Namespace != "maps" {
		t.Fatalf("the SDK decoded the namespace as %q", fc.Namespace)
	}
	out, err := toolcalls.OpenAIResponses(context.Background(), rt, resp.Output)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 {
		t.Fatalf("%d items, want 4", len(out))
	}
	if got := marshal(t, out[2]); !strings.Contains(got, `"output":"tides (MCP name weather_tides): High and low tide times at a harbour`) {
		t.Errorf("toolc_search_tools answered %s", got)
	}
	out = slices.Delete(out, 2, 3)
	wantEncoded(t, "items", out, []string{
		`{"output":[{"text":"radar of Rome","type":"input_text"},{"image_url":"data:image/png;base64,iVBORw0KGgpmYWtl","type":"input_image"}],"call_id":"call_a","type":"function_call_output"}`,
		`{"output":"high tide at Bergen 06:12","call_id":"call_b","type":"function_call_output"}`,
		`{"output":"high tide at Hull 06:12","call_id":"call_d","type":"function_call_output"}`,
	})
}

// TestDeferredAnthropic: Anthropic's tool search tool runs on its side
// (server_tool_use and tool_search_tool_result blocks, which Anthropic
// skips) and loads the deferred tool, which the model then calls by name;
// toolc's own search and call tools answer as well.
func TestDeferredAnthropic(t *testing.T) {
	rt, cat := newDeferredRuntime(t)
	if got, want := projected(t, cat, catalog.Anthropic), []string{"forecast", "radar (deferred)", "tides (deferred)", catalog.AnthropicToolSearchName}; !slices.Equal(got, want) {
		t.Fatalf("anthropic projects %v, want %v", got, want)
	}
	var msg anthropic.Message
	if err := json.Unmarshal([]byte(`{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"stop_reason": "tool_use",
		"content": [
			{"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "rain radar"}},
			{"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
			 "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "radar"}]}},
			{"type": "tool_use", "id": "toolu_1", "name": "radar", "input": {"city": "Oslo"}},
			{"type": "tool_use", "id": "toolu_2", "name": "toolc_search_tools", "input": {"query": "tide times", "limit": 1}},
			{"type": "tool_use", "id": "toolu_3", "name": "toolc_call_tool", "input": {"name": "tides", "arguments": "{\"harbour\":\"Hull\"}"}}
		]}`), &msg); err != nil {
		t.Fatal(err)
	}
	if ref := msg.Content[1].AsToolSearchToolResult().Content.AsResponseToolSearchToolSearchResultBlock().ToolReferences; len(ref) != 1 || ref[0].ToolName != "radar" {
		t.Fatalf("the SDK decoded the tool search result as %+v", ref)
	}
	out, err := toolcalls.Anthropic(context.Background(), rt, msg.Content)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d blocks, want 3", len(out))
	}
	if got := marshal(t, out[1]); !strings.Contains(got, `"text":"tides (MCP name weather_tides): High and low tide times at a harbour`) {
		t.Errorf("toolc_search_tools answered %s", got)
	}
	out = slices.Delete(out, 1, 2)
	wantEncoded(t, "blocks", out, []string{
		`{"tool_use_id":"toolu_1","content":[{"text":"radar of Oslo","type":"text"},{"source":{"data":"iVBORw0KGgpmYWtl","media_type":"image/png","type":"base64"},"type":"image"}],"type":"tool_result"}`,
		`{"tool_use_id":"toolu_3","content":[{"text":"high tide at Hull 06:12","type":"text"}],"type":"tool_result"}`,
	})
}
