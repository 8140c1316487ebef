// Package toolcalls runs the tool calls in a model's reply through a
// runtime and returns what goes back to the model, in the types of the
// official OpenAI and Anthropic Go SDKs:
//
//   - OpenAIChat: the tool_calls of a Chat Completions message, answered by
//     tool messages;
//   - OpenAIResponses: the function_call items of a Responses output,
//     answered by function_call_output items;
//   - Anthropic: the tool_use blocks of a Messages reply, answered by
//     tool_result blocks for the next user message.
//
// The calls of one reply run at the same time, as models that make
// parallel tool calls expect; the answers keep the calls' order. Whatever a
// model can act on (an unknown tool, invalid arguments, a failing handler)
// is an answer, not an error: the error return is for a context that ended.
package toolcalls

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// Caller runs one tool by name with JSON arguments. *runtime.Runtime is
// one; arguments may be an object or a JSON string holding one, as OpenAI
// sends them.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (*runtime.Result, error)
}

var _ Caller = (*runtime.Runtime)(nil)

// call is one tool call of a reply, in provider-neutral form.
type call struct {
	name string
	args json.RawMessage
	// refusal, when set, is the answer without running anything.
	refusal string
}

// runAll runs the calls at the same time and returns their results in
// order. A call that cannot run becomes a tool error result, so every
// call gets an answer.
func runAll(ctx context.Context, c Caller, calls []call) ([]*runtime.Result, error) {
	results := make([]*runtime.Result, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, cl := range calls {
		if cl.refusal != "" {
			results[i] = toolError(cl.refusal)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Call(ctx, cl.name, cl.args)
			switch {
			case errors.Is(err, runtime.ErrUnknownTool):
				res, err = toolError(fmt.Sprintf("there is no tool %q; call one of the tools you were given", cl.name)), nil
			case err == nil && res == nil:
				res = toolError(fmt.Sprintf("tool %s returned no result", cl.name))
			}
			results[i], errs[i] = res, err
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%s): %w", i, calls[i].name, err)
		}
	}
	return results, nil
}

func toolError(msg string) *runtime.Result {
	return plugins.Errorf("%s", msg)
}

// OpenAIChat answers the tool calls of a Chat Completions assistant
// message (message.ToolCalls) with one tool message each, to append to the
// conversation after the assistant message.
func OpenAIChat(ctx context.Context, c Caller, toolCalls []openai.ChatCompletionMessageToolCallUnion) ([]openai.ChatCompletionMessageParamUnion, error) {
	calls := make([]call, len(toolCalls))
	for i, tc := range toolCalls {
		if tc.Type != "" && tc.Type != "function" {
			calls[i] = call{name: tc.Custom.Name, refusal: fmt.Sprintf("tool %q is a %s tool; only function tools are served here", tc.Custom.Name, tc.Type)}
			continue
		}
		calls[i] = call{name: tc.Function.Name, args: json.RawMessage(tc.Function.Arguments)}
	}
	results, err := runAll(ctx, c, calls)
	if err != nil {
		return nil, err
	}
	out := make([]openai.ChatCompletionMessageParamUnion, len(results))
	for i, res := range results {
		out[i] = openai.ToolMessage(Text(res), toolCalls[i].ID)
	}
	return out, nil
}

// OpenAIResponses answers the function_call items of a Responses output
// (response.Output) with one function_call_output item each, to send as
// input of the next request. Other output items are skipped. An output is
// text, or, when the result holds an image, a list of text and images.
func OpenAIResponses(ctx context.Context, c Caller, output []responses.ResponseOutputItemUnion) ([]responses.ResponseInputItemUnionParam, error) {
	var calls []call
	var ids []string
	for _, item := range output {
		if item.Type != "function_call" {
			continue
		}
		fc := item.AsFunctionCall()
		calls = append(calls, call{name: fc.Name, args: json.RawMessage(fc.Arguments)})
		ids = append(ids, fc.CallID)
	}
	results, err := runAll(ctx, c, calls)
	if err != nil {
		return nil, err
	}
	out := make([]responses.ResponseInputItemUnionParam, len(results))
	for i, res := range results {
		var item responses.ResponseInputItemUnionParam
		if hasImage(res) {
			item = responses.ResponseInputItemParamOfFunctionCallOutput(responsesContent(res))
		} else {
			item = responses.ResponseInputItemParamOfFunctionCallOutput(Text(res))
		}
		item.OfFunctionCallOutput.CallID = openai.String(ids[i])
		out[i] = item
	}
	return out, nil
}

// hasImage reports whether a result holds an image that a model API takes
// as an image.
func hasImage(res *runtime.Result) bool {
	for _, c := range res.Content {
		if c.Type == "image" && imageTypes[c.MIMEType] {
			return true
		}
	}
	return false
}

// responsesContent is a result as a Responses function_call_output list:
// images as images (data URLs), everything else as text.
func responsesContent(res *runtime.Result) responses.ResponseFunctionCallOutputItemListParam {
	var out responses.ResponseFunctionCallOutputItemListParam
	for _, c := range res.Content {
		if c.Type == "image" && imageTypes[c.MIMEType] {
			url := "data:" + c.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(c.Data)
			out = append(out, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(url)}})
			continue
		}
		out = append(out, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: contentText(c)}})
	}
	return out
}

// Anthropic answers the tool_use blocks of a Messages reply
// (message.Content) with one tool_result block each; send them as the
// content of the next user message (anthropic.NewUserMessage). Text and
// images go across as such; other content is described in text.
func Anthropic(ctx context.Context, c Caller, content []anthropic.ContentBlockUnion) ([]anthropic.ContentBlockParamUnion, error) {
	var calls []call
	var ids []string
	for _, block := range content {
		if block.Type != "tool_use" {
			continue
		}
		tu := block.AsToolUse()
		calls = append(calls, call{name: tu.Name, args: tu.Input})
		ids = append(ids, tu.ID)
	}
	results, err := runAll(ctx, c, calls)
	if err != nil {
		return nil, err
	}
	out := make([]anthropic.ContentBlockParamUnion, len(results))
	for i, res := range results {
		tr := anthropic.ToolResultBlockParam{ToolUseID: ids[i], Content: anthropicContent(res)}
		if res.IsError {
			tr.IsError = anthropic.Bool(true)
		}
		out[i] = anthropic.ContentBlockParamUnion{OfToolResult: &tr}
	}
	return out, nil
}

// imageTypes are the image types that Anthropic's tool_result and OpenAI's
// Responses function_call_output both take.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

func anthropicContent(res *runtime.Result) []anthropic.ToolResultBlockParamContentUnion {
	var out []anthropic.ToolResultBlockParamContentUnion
	for _, c := range res.Content {
		if c.Type == "image" && imageTypes[c.MIMEType] {
			out = append(out, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
				Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
					Data:      base64.StdEncoding.EncodeToString(c.Data),
					MediaType: anthropic.Base64ImageSourceMediaType(c.MIMEType),
				}},
			}})
			continue
		}
		out = append(out, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: contentText(c)}})
	}
	if len(out) == 0 {
		// A tool_result with no content reads as success with nothing to
		// say, which is what an empty result means.
		return nil
	}
	return out
}

// Text is a result as text, for the APIs whose tool results are text
// only: its text blocks, and a line describing each other block (an image
// becomes "[image/png image, 1234 bytes]"), one after another.
func Text(res *runtime.Result) string {
	var b strings.Builder
	for i, c := range res.Content {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(contentText(c))
	}
	return b.String()
}

// contentText is one content block as text: itself when it is text, else
// a description that tells the model what was there.
func contentText(c plugins.Content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %d bytes]", c.MIMEType, c.Type, len(c.Data))
	case "resource_link":
		s := "[resource " + c.URI
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s + "]"
	case "resource":
		if r := c.Resource; r != nil {
			if r.Blob == nil {
				return r.Text
			}
			return fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
		}
	}
	return fmt.Sprintf("[%s content]", c.Type)
}
