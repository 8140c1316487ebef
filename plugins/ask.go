package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// A handler may ask its client a question in the middle of a call: a form
// for the user to fill in (Elicit), a completion from the client's model
// (Sample), or the client's roots (Roots). These are MCP's elicitation,
// sampling and roots, and one handler serves both ways MCP carries them:
//
//   - A client of MCP 2026-07-28 gets an InputRequiredResult with the
//     questions, answers them, and calls the tool again with the answers
//     (multi round-trip requests, SEP-2322).
//   - A client of an older revision, in a session, gets elicitation/create,
//     sampling/createMessage or roots/list over its session; toolc then
//     calls the tool again with the answers.
//
// Either way the handler runs again from the top with the answers known,
// and each ask returns its answer at once. Until then an ask returns an
// error wrapping ErrInputRequired, which the handler returns: the call
// then ends with the questions, whatever the handler returned. A handler
// may ask several questions before it returns; they reach the client
// together. Replaying the call, rather than keeping it running while the
// user thinks, keeps no state in the server between rounds, so that any
// replica can serve the next round, and the call's timeout counts only the
// handler's own time. A handler should therefore do what has effects after
// its asks, not before.

// ErrInputRequired is wrapped by the error of an ask whose answer is not
// known yet. A handler returns it (or any error wrapping it), and the call
// ends with its questions for the client.
var ErrInputRequired = errors.New("the call waits for the client's answer")

// ErrMissingCapability is wrapped by the error of an ask that the client
// cannot answer, because it did not declare the capability (or because the
// call did not come from an MCP client at all). A handler may go on
// without the answer; if it returns the error, the client gets MCP's
// MissingRequiredClientCapability error (-32021) naming the capability.
var ErrMissingCapability = errors.New("the client did not declare the capability")

// MissingCapabilityError is the error of an ask the client cannot answer.
// errors.Is(err, ErrMissingCapability) reports it.
type MissingCapabilityError struct {
	// Capability is "elicitation", "sampling" or "roots".
	Capability string
}

func (e *MissingCapabilityError) Error() string {
	return fmt.Sprintf("the client did not declare the %s capability", e.Capability)
}

func (e *MissingCapabilityError) Is(target error) bool { return target == ErrMissingCapability }

// Input is what the host tells a handler about its client, for one round
// of a call: the capabilities the client declared, and the answers it has
// given so far.
type Input struct {
	Elicitation, Sampling, Roots bool
	Answers                      []Answer
}

// Answer is the client's answer to one question.
type Answer struct {
	// ID is the question's id, as the handler asked it.
	ID string
	// ParamsSHA256 is the SHA-256 of the Params of the InputRequest it
	// answers: an answer reaches only the question it was given for.
	ParamsSHA256 []byte
	// Result is the client's result, as JSON: an MCP ElicitResult,
	// CreateMessageResult or ListRootsResult.
	Result json.RawMessage
}

// InputRequest is a question the handler asked and has no answer to.
type InputRequest struct {
	ID string
	// Method is "elicitation/create", "sampling/createMessage" or
	// "roots/list".
	Method string
	// Params is the request's params as JSON.
	Params json.RawMessage
}

// Methods of the questions, as MCP names them.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// ParamsHash is the hash an Answer carries for the question q.
func (q InputRequest) ParamsHash() []byte {
	sum := sha256.Sum256(q.Params)
	return sum[:]
}

type askKey struct{}

// askState is one round of a call's questions: the input it started
// with, and the questions asked without an answer.
type askState struct {
	in *Input

	mu      sync.Mutex
	pending []InputRequest
}

// WithInput returns a context under which a handler's asks are answered
// from in, and record the questions they cannot answer yet; Finish reads
// them. A host calls it once per round of a call.
func WithInput(ctx context.Context, in *Input) context.Context {
	return context.WithValue(ctx, askKey{}, &askState{in: in})
}

// InputOf returns the Input that WithInput put on ctx, or nil.
func InputOf(ctx context.Context) *Input {
	if st, ok := ctx.Value(askKey{}).(*askState); ok {
		return st.in
	}
	return nil
}

// Finish turns what a handler returned into the round's result: MCP's
// missing capability error, when the handler returned (or joined) a
// MissingCapabilityError, since the call cannot finish without it; its
// questions, when it asked any it has no answer to, whatever else it
// returned; a tool error for any other error; and an empty result for
// none. ctx is the one the handler ran under.
func Finish(ctx context.Context, res *Result, err error) *Result {
	var missing *MissingCapabilityError
	if errors.As(err, &missing) {
		return &Result{MissingCapability: missing.Capability, IsError: true,
			Content: []Content{TextContent(missing.Error())}}
	}
	if st, ok := ctx.Value(askKey{}).(*askState); ok {
		st.mu.Lock()
		pending := st.pending
		st.mu.Unlock()
		if len(pending) > 0 {
			return &Result{InputRequests: pending}
		}
	}
	switch {
	case err != nil:
		return Errorf("%v", err)
	case res == nil:
		return NewResult()
	}
	return res
}

// ask answers the question (id, method, params) into out, or records it.
func ask(ctx context.Context, id, method, capability string, params, out any) error {
	if id == "" {
		return fmt.Errorf("plugins: a question needs an id")
	}
	st, _ := ctx.Value(askKey{}).(*askState)
	if st == nil || st.in == nil || !hasCapability(st.in, capability) {
		return &MissingCapabilityError{Capability: capability}
	}
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("plugins: encode the question %s: %w", id, err)
	}
	q := InputRequest{ID: id, Method: method, Params: b}
	sum := q.ParamsHash()
	for _, a := range st.in.Answers {
		if a.ID == id && bytes.Equal(a.ParamsSHA256, sum) {
			if err := json.Unmarshal(a.Result, out); err != nil {
				return fmt.Errorf("plugins: the client's answer to %s is not a %s result: %v", id, method, err)
			}
			return nil
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.pending {
		if p.ID == id {
			if !bytes.Equal(p.Params, b) {
				return fmt.Errorf("plugins: two different questions with the id %q in one call", id)
			}
			return fmt.Errorf("%w: %s", ErrInputRequired, id)
		}
	}
	st.pending = append(st.pending, q)
	return fmt.Errorf("%w: %s", ErrInputRequired, id)
}

func hasCapability(in *Input, capability string) bool {
	switch capability {
	case "elicitation":
		return in.Elicitation
	case "sampling":
		return in.Sampling
	case "roots":
		return in.Roots
	}
	return false
}

// Form is an elicitation: a message for the user and the flat form to
// fill in.
type Form struct {
	Message string `json:"message"`
	// Schema is MCP's requestedSchema: a JSON Schema object of type
	// "object" whose properties are of primitive types (string, number,
	// integer, boolean, enums of strings, and arrays of enum strings for
	// a multiple choice), as MCP's elicitation allows.
	Schema json.RawMessage `json:"requestedSchema"`
}

// ElicitResult is the user's answer to a Form.
type ElicitResult struct {
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content holds the form's values when the user accepted.
	Content map[string]any `json:"content,omitempty"`
}

// Accepted reports whether the user filled in the form.
func (r *ElicitResult) Accepted() bool { return r.Action == "accept" }

// Decode decodes the accepted form's values into v, a pointer to a struct
// whose json tags are the form's property names.
func (r *ElicitResult) Decode(v any) error {
	b, err := json.Marshal(r.Content)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Elicit asks the user to fill in form. id names the question within the
// call (the key of MCP's inputRequests); it must be the same in every
// round of the call.
func Elicit(ctx context.Context, id string, form Form) (*ElicitResult, error) {
	if !isObject(form.Schema) {
		return nil, fmt.Errorf("plugins: the form of %s needs a schema, a JSON object", id)
	}
	params := struct {
		Mode string `json:"mode"`
		Form
	}{"form", form}
	var res ElicitResult
	if err := ask(ctx, id, MethodElicit, "elicitation", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	// Role is "user" or "assistant".
	Role    string          `json:"role"`
	Content SamplingContent `json:"content"`
}

// SamplingContent is the content of a sampling message: text, or an image
// or audio clip (Data, raw bytes, and MIMEType).
type SamplingContent struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// UserText is a user message of text, the common sampling prompt.
func UserText(text string) SamplingMessage {
	return SamplingMessage{Role: "user", Content: SamplingContent{Type: "text", Text: text}}
}

// SampleRequest asks the client's model for a completion (MCP's
// CreateMessageRequest params).
type SampleRequest struct {
	Messages      []SamplingMessage `json:"messages"`
	SystemPrompt  string            `json:"systemPrompt,omitempty"`
	MaxTokens     int               `json:"maxTokens"`
	Temperature   *float64          `json:"temperature,omitempty"`
	StopSequences []string          `json:"stopSequences,omitempty"`
}

// SampleResult is the client's completion.
type SampleResult struct {
	Role       string `json:"role"`
	Model      string `json:"model"`
	StopReason string `json:"stopReason,omitempty"`
	// Content is the completion's content: one block or, from a client
	// of 2025-11-25 or later, an array of them.
	Content json.RawMessage `json:"content"`
}

// Text returns the completion's text: its first text block, or "".
func (r *SampleResult) Text() string {
	var one SamplingContent
	if json.Unmarshal(r.Content, &one) == nil && one.Type != "" {
		if one.Type == "text" {
			return one.Text
		}
		return ""
	}
	var many []SamplingContent
	if json.Unmarshal(r.Content, &many) == nil {
		for _, c := range many {
			if c.Type == "text" {
				return c.Text
			}
		}
	}
	return ""
}

// Sample asks the client's model for a completion. id names the question
// within the call, as in Elicit.
func Sample(ctx context.Context, id string, req SampleRequest) (*SampleResult, error) {
	if len(req.Messages) == 0 || req.MaxTokens <= 0 {
		return nil, fmt.Errorf("plugins: the sampling request %s needs messages and a positive MaxTokens", id)
	}
	var res SampleResult
	if err := ask(ctx, id, MethodCreateMessage, "sampling", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Root is one of the client's roots: a directory or a file it lets the
// server work in.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Roots asks the client for its roots. id names the question within the
// call, as in Elicit.
func Roots(ctx context.Context, id string) ([]Root, error) {
	var res struct {
		Roots []Root `json:"roots"`
	}
	if err := ask(ctx, id, MethodListRoots, "roots", struct{}{}, &res); err != nil {
		return nil, err
	}
	return res.Roots, nil
}
