package plugins

import (
	"context"
	"encoding/json"
	"fmt"

	fastjson "github.com/segmentio/encoding/json"
)

// The handlers of a service's prompts and resources are Handlers too, run
// like tools in a plugin or in process, named by a prefix and the prompt's
// or resource's name.
const (
	PromptPrefix   = "prompt:"
	ResourcePrefix = "resource:"
)

// PromptMessage is one message of a prompt: its role, "user" or
// "assistant", and its content.
type PromptMessage struct {
	Role    string
	Content Content
}

// HandlePrompt returns the Handler for a prompt whose contract has no
// messages: the arguments, which the host has held to the contract,
// decode into Args (strings, as MCP passes them), and fn returns the
// messages. A handler may ask the client (Elicit, Sample, Roots) as a
// tool's may.
func HandlePrompt[Args any](prompt string, fn func(ctx context.Context, args Args) ([]PromptMessage, error)) Handler {
	return &promptHandler[Args]{name: prompt, fn: fn}
}

type promptHandler[Args any] struct {
	name string
	fn   func(context.Context, Args) ([]PromptMessage, error)
}

func (h *promptHandler[Args]) Tool() string { return PromptPrefix + h.name }

func (h *promptHandler[Args]) Call(ctx context.Context, raw json.RawMessage) (res *Result, err error) {
	defer recoverPanic(h.Tool(), &res, &err)
	var args Args
	if len(raw) > 0 {
		if err := fastjson.Unmarshal(raw, &args); err != nil {
			return decodeError(h.Tool(), err), nil
		}
	}
	msgs, err := h.fn(ctx, args)
	if err != nil {
		return nil, err // Finish makes a question asked, or an error, the result
	}
	out := &Result{Content: make([]Content, 0, len(msgs))}
	for _, m := range msgs {
		c := m.Content
		c.Role = m.Role
		if c.Role == "" {
			c.Role = "user"
		}
		out.Content = append(out.Content, c)
	}
	return out, nil
}

// ResourceRequest is what a resource's handler reads: the URI the client
// asked for, and for a resource template the values of its variables,
// which the host has held to the contract.
type ResourceRequest[Vars any] struct {
	URI       string `json:"uri"`
	Variables Vars   `json:"variables"`
}

// HandleResource returns the Handler for a resource whose contract has no
// text or file: fn returns its contents, one or more, each with its URI
// (the request's, when empty), MIME type (the contract's, when empty) and
// Text, or Blob for binary content.
func HandleResource[Vars any](resource string, fn func(ctx context.Context, req ResourceRequest[Vars]) ([]ResourceContents, error)) Handler {
	return &resourceHandler[Vars]{name: resource, fn: fn}
}

type resourceHandler[Vars any] struct {
	name string
	fn   func(context.Context, ResourceRequest[Vars]) ([]ResourceContents, error)
}

func (h *resourceHandler[Vars]) Tool() string { return ResourcePrefix + h.name }

func (h *resourceHandler[Vars]) Call(ctx context.Context, raw json.RawMessage) (res *Result, err error) {
	defer recoverPanic(h.Tool(), &res, &err)
	var req ResourceRequest[Vars]
	if len(raw) > 0 {
		if err := fastjson.Unmarshal(raw, &req); err != nil {
			return decodeError(h.Tool(), err), nil
		}
	}
	contents, err := h.fn(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(contents) == 0 {
		return Errorf("resource %s: the handler returned no contents", h.name), nil
	}
	out := &Result{Content: make([]Content, 0, len(contents))}
	for i := range contents {
		rc := contents[i]
		if rc.URI == "" {
			rc.URI = req.URI
		}
		out.Content = append(out.Content, Content{Type: "resource", Resource: &rc})
	}
	return out, nil
}

// ResourceCall is the arguments of a resource handler's call, as the
// host sends them.
func ResourceCall(uri string, variables map[string]string) json.RawMessage {
	if variables == nil {
		variables = map[string]string{}
	}
	b, err := json.Marshal(struct {
		URI       string            `json:"uri"`
		Variables map[string]string `json:"variables"`
	}{uri, variables})
	if err != nil {
		panic(fmt.Sprintf("plugins: %v", err)) // strings only
	}
	return b
}
