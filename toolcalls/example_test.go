package toolcalls_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/toolcalls"
)

// exampleRuntime serves testdata/forecast in-process; a service would
// rather load its embedded catalog with catalog.Load.
func exampleRuntime() *runtime.Runtime {
	res, err := compiler.Compile(compiler.Config{}, "./testdata/forecast")
	if err != nil || res.HasErrors() {
		panic(fmt.Sprint(err, res.Diagnostics))
	}
	type req struct {
		City string `json:"city"`
	}
	rt := runtime.New(runtime.Options{})
	rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"forecast": runtime.Local(
		plugins.Handle("forecast", func(_ context.Context, r req) (*plugins.Result, error) {
			return plugins.JSON(map[string]string{"summary": "sunny in " + r.City})
		}),
		plugins.Handle("radar", func(_ context.Context, r req) (*plugins.Result, error) {
			return plugins.Text("no rain near " + r.City), nil
		}),
	)})
	return rt
}

func ExampleOpenAIChat() {
	ctx := context.Background()
	rt := exampleRuntime()
	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o}

	// completion, err := client.Chat.Completions.New(ctx, params), here
	// decoded from what the API sends:
	var completion openai.ChatCompletion
	json.Unmarshal([]byte(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"forecast","arguments":"{\"city\":\"Lisbon\"}"}}]}}]}`), &completion)

	msg := completion.Choices[0].Message
	answers, err := toolcalls.OpenAIChat(ctx, rt, msg.ToolCalls)
	if err != nil {
		panic(err)
	}
	params.Messages = append(params.Messages, msg.ToParam())
	params.Messages = append(params.Messages, answers...)
	// ...and call client.Chat.Completions.New(ctx, params) again.

	b, _ := json.Marshal(answers)
	fmt.Println(string(b))
	// Output: [{"content":"{\"summary\":\"sunny in Lisbon\"}","tool_call_id":"call_1","role":"tool"}]
}

func ExampleAnthropic() {
	ctx := context.Background()
	rt := exampleRuntime()

	// message, err := client.Messages.New(ctx, params), here decoded from
	// what the API sends:
	var message anthropic.Message
	json.Unmarshal([]byte(`{"role":"assistant","stop_reason":"tool_use","content":[
		{"type":"tool_use","id":"toolu_1","name":"radar","input":{"city":"Lisbon"}}]}`), &message)

	results, err := toolcalls.Anthropic(ctx, rt, message.Content)
	if err != nil {
		panic(err)
	}
	next := []anthropic.MessageParam{message.ToParam(), anthropic.NewUserMessage(results...)}
	// ...append next to params.Messages and call client.Messages.New again.

	b, _ := json.Marshal(next[1])
	fmt.Println(string(b))
	// Output: {"content":[{"tool_use_id":"toolu_1","content":[{"text":"no rain near Lisbon","type":"text"}],"type":"tool_result"}],"role":"user"}
}
