package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolc/toolc/plugins"
)

// The handlers that ask their client something (mrtr.cue). Each asks with
// plugins.Elicit, Sample or Roots. Until the answer is known the ask
// returns an error wrapping plugins.ErrInputRequired, which the handler
// returns; the call then ends with the questions, and the handler runs
// again once the client has answered, from the top, with the answer known.

// The forms, as MCP's requestedSchema: flat objects of primitive fields.
var (
	nameForm = plugins.Form{Message: "What is your name?", Schema: json.RawMessage(
		`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	confirmForm = plugins.Form{Message: "Please confirm", Schema: json.RawMessage(
		`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
	colorForm = plugins.Form{Message: "Step 2: What is your favorite color?", Schema: json.RawMessage(
		`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)}
)

// name returns the name the user gave in answer to nameForm.
func name(res *plugins.ElicitResult) string {
	var v struct {
		Name string `json:"name"`
	}
	if !res.Accepted() || res.Decode(&v) != nil || v.Name == "" {
		return "stranger"
	}
	return v.Name
}

func (fixtures) TestInputRequiredResultElicitation(ctx context.Context, _ TestInputRequiredResultElicitationRequest) (*plugins.Result, error) {
	res, err := plugins.Elicit(ctx, "user_name", nameForm)
	if err != nil {
		return nil, err
	}
	return plugins.Text("Hello, " + name(res) + "!"), nil
}

func (fixtures) TestInputRequiredResultSampling(ctx context.Context, _ TestInputRequiredResultSamplingRequest) (*plugins.Result, error) {
	res, err := plugins.Sample(ctx, "capital_question", plugins.SampleRequest{
		Messages:  []plugins.SamplingMessage{plugins.UserText("What is the capital of France?")},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, err
	}
	return plugins.Text("LLM response: " + res.Text()), nil
}

func (fixtures) TestInputRequiredResultListRoots(ctx context.Context, _ TestInputRequiredResultListRootsRequest) (*plugins.Result, error) {
	roots, err := plugins.Roots(ctx, "client_roots")
	if err != nil {
		return nil, err
	}
	return plugins.Text("Client roots: " + rootList(roots)), nil
}

func rootList(roots []plugins.Root) string {
	if len(roots) == 0 {
		return "none"
	}
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}

// confirm asks confirmForm. The server seals the question into the
// requestState it hands out, and accepts the answer only under a state
// that opens with its key and names this call and this question.
func confirm(ctx context.Context) (*plugins.Result, error) {
	res, err := plugins.Elicit(ctx, "confirm", confirmForm)
	if err != nil {
		return nil, err
	}
	var v struct {
		OK bool `json:"ok"`
	}
	_ = res.Decode(&v)
	return plugins.Text(fmt.Sprintf("state-ok: the requestState was verified; confirmed=%t", res.Accepted() && v.OK)), nil
}

func (fixtures) TestInputRequiredResultRequestState(ctx context.Context, _ TestInputRequiredResultRequestStateRequest) (*plugins.Result, error) {
	return confirm(ctx)
}

func (fixtures) TestInputRequiredResultTamperedState(ctx context.Context, _ TestInputRequiredResultTamperedStateRequest) (*plugins.Result, error) {
	return confirm(ctx)
}

// TestInputRequiredResultMultipleInputs asks its three questions before it
// looks at any answer, so that they reach the client in one round.
func (fixtures) TestInputRequiredResultMultipleInputs(ctx context.Context, _ TestInputRequiredResultMultipleInputsRequest) (*plugins.Result, error) {
	user, errName := plugins.Elicit(ctx, "user_name", nameForm)
	greeting, errGreet := plugins.Sample(ctx, "greeting", plugins.SampleRequest{
		Messages:  []plugins.SamplingMessage{plugins.UserText("Generate a greeting")},
		MaxTokens: 50,
	})
	roots, errRoots := plugins.Roots(ctx, "client_roots")
	if err := errors.Join(errName, errGreet, errRoots); err != nil {
		return nil, err
	}
	return plugins.Text(fmt.Sprintf("%s, %s! Your roots: %s", greeting.Text(), name(user), rootList(roots))), nil
}

// TestInputRequiredResultMultiRound asks its second question only after the
// first is answered: two rounds, and the first answer is carried to the
// third in the sealed requestState.
func (fixtures) TestInputRequiredResultMultiRound(ctx context.Context, _ TestInputRequiredResultMultiRoundRequest) (*plugins.Result, error) {
	step1, err := plugins.Elicit(ctx, "step1", plugins.Form{Message: "Step 1: What is your name?", Schema: nameForm.Schema})
	if err != nil {
		return nil, err
	}
	step2, err := plugins.Elicit(ctx, "step2", colorForm)
	if err != nil {
		return nil, err
	}
	var c struct {
		Color string `json:"color"`
	}
	_ = step2.Decode(&c)
	return plugins.Text(fmt.Sprintf("%s likes %s", name(step1), c.Color)), nil
}

// TestInputRequiredResultCapabilities asks only what the client can
// answer: an ask of a capability the client did not declare fails at once
// with plugins.ErrMissingCapability, and the handler tries the next.
func (fixtures) TestInputRequiredResultCapabilities(ctx context.Context, _ TestInputRequiredResultCapabilitiesRequest) (*plugins.Result, error) {
	user, err := plugins.Elicit(ctx, "user_name", nameForm)
	if err == nil {
		return plugins.Text("Hello, " + name(user) + "!"), nil
	}
	if !errors.Is(err, plugins.ErrMissingCapability) {
		return nil, err
	}
	answer, err := plugins.Sample(ctx, "capability_question", plugins.SampleRequest{
		Messages:  []plugins.SamplingMessage{plugins.UserText("Which MCP capabilities does this client have?")},
		MaxTokens: 50,
	})
	if errors.Is(err, plugins.ErrMissingCapability) {
		return plugins.Text("The client declared neither elicitation nor sampling"), nil
	}
	if err != nil {
		return nil, err
	}
	return plugins.Text("LLM response: " + answer.Text()), nil
}

// TestMissingCapability needs sampling and does not go on without it: it
// returns the ask's error, which the client receives as MCP's
// MissingRequiredClientCapability error naming sampling.
func (fixtures) TestMissingCapability(ctx context.Context, _ TestMissingCapabilityRequest) (*plugins.Result, error) {
	res, err := plugins.Sample(ctx, "summary", plugins.SampleRequest{
		Messages:  []plugins.SamplingMessage{plugins.UserText("Summarize the MCP specification in one sentence.")},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, err
	}
	return plugins.Text("LLM response: " + res.Text()), nil
}

func (fixtures) TestStreamingElicitation(ctx context.Context, _ TestStreamingElicitationRequest) (*plugins.Result, error) {
	plugins.Progress(ctx, 0, 1, "asking the user")
	res, err := plugins.Elicit(ctx, "confirm", confirmForm)
	if err != nil {
		return nil, err
	}
	return plugins.Text("The user answered: " + res.Action), nil
}

// The tools of the legacy scenarios.

func (fixtures) TestSampling(ctx context.Context, req TestSamplingRequest) (*plugins.Result, error) {
	res, err := plugins.Sample(ctx, "llm", plugins.SampleRequest{
		Messages:  []plugins.SamplingMessage{plugins.UserText(req.Prompt)},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, err
	}
	return plugins.Text("LLM response: " + res.Text()), nil
}

var userForm = json.RawMessage(`{"type":"object","properties":{` +
	`"username":{"type":"string","description":"User's response"},` +
	`"email":{"type":"string","description":"User's email address"}},` +
	`"required":["username","email"]}`)

func (fixtures) TestElicitation(ctx context.Context, req TestElicitationRequest) (*plugins.Result, error) {
	res, err := plugins.Elicit(ctx, "user", plugins.Form{Message: req.Message, Schema: userForm})
	if err != nil {
		return nil, err
	}
	return plugins.Text("User response: " + describe(res)), nil
}

// describe renders an elicitation's outcome as the suite's texts show it.
func describe(res *plugins.ElicitResult) string {
	content, _ := json.Marshal(res.Content)
	return fmt.Sprintf("action=%s, content=%s", res.Action, content)
}

var defaultsForm = json.RawMessage(`{"type":"object","properties":{` +
	`"name":{"type":"string","description":"Your name","default":"John Doe"},` +
	`"age":{"type":"integer","description":"Your age","default":30},` +
	`"score":{"type":"number","description":"Your score","default":95.5},` +
	`"status":{"type":"string","description":"Your status","enum":["active","inactive","pending"],"default":"active"},` +
	`"verified":{"type":"boolean","description":"Whether you are verified","default":true}}}`)

func (fixtures) TestElicitationSep1034Defaults(ctx context.Context, _ TestElicitationSep1034DefaultsRequest) (*plugins.Result, error) {
	res, err := plugins.Elicit(ctx, "defaults", plugins.Form{Message: "Please review and update the form fields with defaults", Schema: defaultsForm})
	if err != nil {
		return nil, err
	}
	return plugins.Text("Elicitation completed: " + describe(res)), nil
}

var enumsForm = json.RawMessage(`{"type":"object","properties":{` +
	`"untitledSingle":{"type":"string","description":"Pick one","enum":["option1","option2","option3"]},` +
	`"titledSingle":{"type":"string","description":"Pick one","oneOf":[` +
	`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
	`"legacyEnum":{"type":"string","description":"Pick one","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
	`"untitledMulti":{"type":"array","description":"Pick any","items":{"type":"string","enum":["option1","option2","option3"]}},` +
	`"titledMulti":{"type":"array","description":"Pick any","items":{"anyOf":[` +
	`{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)

func (fixtures) TestElicitationSep1330Enums(ctx context.Context, _ TestElicitationSep1330EnumsRequest) (*plugins.Result, error) {
	res, err := plugins.Elicit(ctx, "enums", plugins.Form{Message: "Please pick from the enum fields", Schema: enumsForm})
	if err != nil {
		return nil, err
	}
	return plugins.Text("Elicitation completed: " + describe(res)), nil
}

var contextForm = plugins.Form{Message: "What context should the prompt use?", Schema: json.RawMessage(
	`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)}

// TestInputRequiredResultPromptPrompt asks before it writes its message:
// an ask from prompts/get, which MCP carries as it carries a tool's.
func (fixtures) TestInputRequiredResultPromptPrompt(ctx context.Context, _ TestInputRequiredResultPromptPromptArgs) ([]plugins.PromptMessage, error) {
	res, err := plugins.Elicit(ctx, "user_context", contextForm)
	if err != nil {
		return nil, err
	}
	var v struct {
		Context string `json:"context"`
	}
	if !res.Accepted() || res.Decode(&v) != nil {
		v.Context = "none"
	}
	return []plugins.PromptMessage{{Role: "user", Content: plugins.TextContent("Use this context: " + v.Context)}}, nil
}
