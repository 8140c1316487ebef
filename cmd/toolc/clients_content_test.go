package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRealClientsContent drives the clients of other implementations
// against toolc serve of two examples: issuetracker, a real server with a
// prompt, a resource from a file, a resource template that its plugin
// reads, and completions; and conformance, for a prompt with an image, a
// binary resource, a template served from the contract and a skill. Over
// Streamable HTTP the clients share one server; over stdio each starts
// its own, as a client does. Every client runs the same steps
// (contentSteps): it lists, gets, reads and completes each kind, and
// checks what it parsed against the files the content comes from; it
// sends what the contract does not allow and gets the documented errors.
//
//   - the go-sdk client at 2026-07-28 and at 2025-11-25;
//   - mark3labs/mcp-go v1.2.1 at 2026-07-28, its default, and over HTTP
//     at 2025-11-25 too;
//   - the official TypeScript SDK (testdata/tscontent.mjs), 2025-11-25.
//
// Of the Skills extension's methods (skills/list, skills/get,
// resources/directory/read), only the TypeScript SDK can send them: the
// go-sdk client (v1.8.0) sends only the methods it knows (an unknown one
// is jsonrpc2.ErrNotHandled), and mcp-go's client has no public call for
// an arbitrary method (its transport's SendRequest would skip the _meta
// that a 2026-07-28 request carries). Both still read the skill's files,
// which are resources. TestInspectorCLI runs the Inspector's skills/list
// --verify.
func TestRealClientsContent(t *testing.T) {
	t.Parallel()
	steps := contentSteps(t)
	withTS := os.Getenv("TOOLC_NODE") != "" || os.Getenv("TOOLC_TS_SDK") != "" || os.Getenv("TOOLC_REQUIRE_NODE") != ""
	if !withTS {
		t.Log("no TypeScript SDK client: TOOLC_NODE and TOOLC_TS_SDK are not set (scripts/test sets them)")
	}
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		_, url, stderr := startServeHTTP(t, contentPatterns...)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("toolc serve's stderr:\n%s", stderr)
			}
		})
		mcpGoHTTP := func() *mcpgo.Client {
			c, err := mcpgo.NewStreamableHttpClient(url + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		clients := []*contentClient{
			goSDKContentClient(t, "2026-07-28", &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}),
			goSDKContentClient(t, "2025-11-25", &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}),
			mcpGoContentClient(t, mcpGoHTTP(), "2026-07-28"),
			// A session, which only HTTP has.
			mcpGoContentClient(t, mcpGoHTTP(), "2025-11-25"),
		}
		if withTS {
			clients = append(clients, tsContentClient(t, url+"/mcp"))
		}
		runContentSteps(t, clients, steps)
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		serve := func(stderr io.Writer) *exec.Cmd {
			cmd := toolcCmd(t, append([]string{"serve", "--stdio"}, contentPatterns...)...)
			cmd.Stderr = stderr
			return cmd
		}
		mcpGoStdio := mcpgo.NewClient(mcpgotransport.NewStdioWithOptions(toolcBin, nil, nil,
			mcpgotransport.WithCommandFunc(func(context.Context, string, []string, []string) (*exec.Cmd, error) {
				return serve(io.Discard), nil
			})))
		clients := []*contentClient{
			goSDKContentClient(t, "2026-07-28", &mcp.CommandTransport{Command: serve(io.Discard)}),
			goSDKContentClient(t, "2025-11-25", &mcp.CommandTransport{Command: serve(io.Discard)}),
			mcpGoContentClient(t, mcpGoStdio, "2026-07-28"),
		}
		if withTS {
			clients = append(clients, tsContentClient(t, append([]string{toolcBin, "serve", "--stdio"}, contentPatterns...)...))
		}
		runContentSteps(t, clients, steps)
	})
}

// elicitedContext is what every client's elicitation handler answers
// the conformance prompt that asks for a context.
const elicitedContext = "the 2.0 release notes"

// contentPatterns are what the content tests serve.
var contentPatterns = []string{"./examples/issuetracker", "./examples/conformance"}

// contentClient is one real client connected to toolc.
type contentClient struct {
	name string
	// call sends method with params (MCP's JSON) by the client's own
	// call for that method and returns the result as the client parsed
	// it, marshalled again: what the client drops is not there. A
	// JSON-RPC error is an *rpcError.
	call func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// noSkills says why the client cannot send the Skills extension's
	// methods, or is empty when it can.
	noSkills string
}

// rpcError is a JSON-RPC error as a client reported it.
type rpcError struct {
	Code    int64
	Message string
	Data    json.RawMessage // nil where the client drops it
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s %s", e.Code, e.Message, e.Data) }

// contentResult holds what the steps look at of any result.
type contentResult struct {
	Prompts []struct {
		Name      string
		Arguments []struct {
			Name     string
			Required bool
		}
	}
	Messages []struct {
		Role    string
		Content struct {
			Type, Text, MimeType, Data string
			Resource                   struct{ URI, MimeType, Text string }
		}
	}
	Resources []struct {
		URI, Name, MimeType string
	}
	ResourceTemplates []struct {
		URITemplate, Name, MimeType string
	}
	Contents []struct {
		URI, MimeType, Text, Blob string
	}
	Completion struct {
		Values []string
	}
	Skills  []contentSkill
	Skill   contentSkill
	IsError bool
	Content []struct{ Text string }
}

type contentSkill struct {
	URI         string
	Frontmatter struct{ Name, Description string }
	Resources   []struct {
		URI, Digest string
		Size        int
	}
}

// contentStep is one request every client sends, and what it must get:
// a result that check accepts, or the error err.
type contentStep struct {
	name, method, params string
	check                func(t *testing.T, r contentResult)
	err                  *wantRPC
}

// wantRPC is an error a step expects: its code, a part of its message,
// and, where the client keeps the error's data, the URI in it.
type wantRPC struct {
	code    int64
	message string
	uri     string
}

// contentSteps are the requests, checked against the examples' files.
func contentSteps(t *testing.T) []contentStep {
	file := func(path string) []byte {
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	labels := string(file("examples/issuetracker/labels.md"))
	pixel := base64.StdEncoding.EncodeToString(file("examples/conformance/pixel.png"))
	forms := file("examples/conformance/skills/pdf-processing/references/FORMS.md")
	formsDigest := sha256.Sum256(forms)
	// only returns the text and blob of a read whose one contents are
	// uri's, of mimeType.
	only := func(t *testing.T, r contentResult, uri, mimeType string) (text, blob string) {
		t.Helper()
		if len(r.Contents) != 1 || r.Contents[0].URI != uri || r.Contents[0].MimeType != mimeType {
			t.Fatalf("contents %+v; want one of %s, %s", r.Contents, uri, mimeType)
		}
		return r.Contents[0].Text, r.Contents[0].Blob
	}
	completes := func(want ...string) func(*testing.T, contentResult) {
		return func(t *testing.T, r contentResult) {
			if !slices.Equal(r.Completion.Values, want) {
				t.Errorf("values %q; want %q", r.Completion.Values, want)
			}
		}
	}
	skill := func(t *testing.T, s contentSkill) {
		t.Helper()
		if s.URI != "skill://pdf-processing/SKILL.md" || s.Frontmatter.Name != "pdf-processing" || s.Frontmatter.Description == "" {
			t.Errorf("skill %+v; want pdf-processing, described", s)
		}
		i := slices.IndexFunc(s.Resources, func(r struct {
			URI, Digest string
			Size        int
		}) bool {
			return r.URI == "skill://pdf-processing/references/FORMS.md"
		})
		if i < 0 || len(s.Resources) != 3 || s.Resources[i].Digest != "sha256:"+hex.EncodeToString(formsDigest[:]) || s.Resources[i].Size != len(forms) {
			t.Errorf("skill's files %+v; want 3, FORMS.md with the digest and size of the file", s.Resources)
		}
	}
	return []contentStep{
		{name: "prompts/list", method: "prompts/list", params: `{}`, check: func(t *testing.T, r contentResult) {
			var names []string
			for _, p := range r.Prompts {
				names = append(names, p.Name)
				if p.Name == "triage_issue" && fmt.Sprint(p.Arguments) != "[{number true} {focus false}]" {
					t.Errorf("triage_issue's arguments %v; want number, required, and focus", p.Arguments)
				}
			}
			for _, want := range []string{"triage_issue", "test_prompt_with_arguments", "test_prompt_with_image"} {
				if !slices.Contains(names, want) {
					t.Errorf("prompts %q; want %s among them", names, want)
				}
			}
		}},
		{name: "prompts/get with arguments", method: "prompts/get", params: `{"name": "triage_issue", "arguments": {"number": "1041", "focus": "risk"}}`,
			check: func(t *testing.T, r contentResult) {
				if len(r.Messages) != 2 {
					t.Fatalf("messages %+v; want 2", r.Messages)
				}
				if m := r.Messages[0]; m.Role != "user" || m.Content.Type != "text" || !strings.HasPrefix(m.Content.Text, "Triage issue #1041. Read it at issues://issues/1041 ") ||
					!strings.Contains(m.Content.Text, "weigh risk most") {
					t.Errorf("first message %+v; want the text with the number and the focus", m)
				}
				if c := r.Messages[1].Content; c.Type != "resource" || c.Resource.URI != "issues://labels" || c.Resource.MimeType != "text/markdown" || c.Resource.Text != labels {
					t.Errorf("second message %+v; want the label guide, labels.md", c)
				}
			}},
		{name: "prompts/get with a default", method: "prompts/get", params: `{"name": "triage_issue", "arguments": {"number": "1042"}}`,
			check: func(t *testing.T, r contentResult) {
				if len(r.Messages) == 0 || !strings.Contains(r.Messages[0].Content.Text, "#1042.") || !strings.Contains(r.Messages[0].Content.Text, "weigh impact most") {
					t.Errorf("messages %+v; want the number and the default focus, impact", r.Messages)
				}
			}},
		{name: "prompts/get with an image", method: "prompts/get", params: `{"name": "test_prompt_with_image"}`,
			check: func(t *testing.T, r contentResult) {
				if len(r.Messages) != 2 || r.Messages[0].Content.Type != "image" || r.Messages[0].Content.MimeType != "image/png" || r.Messages[0].Content.Data != pixel {
					t.Errorf("messages %+v; want pixel.png, then text", r.Messages)
				}
			}},
		// The prompt's handler asks the user for a context before it
		// writes its message: a 2026-07-28 client answers in a second
		// round (InputRequiredResult), a legacy one over its session.
		{name: "prompts/get that asks the user", method: "prompts/get", params: `{"name": "test_input_required_result_prompt"}`,
			check: func(t *testing.T, r contentResult) {
				if len(r.Messages) != 1 || r.Messages[0].Content.Text != "Use this context: "+elicitedContext {
					t.Errorf("messages %+v; want the context the client's elicitation handler gave", r.Messages)
				}
			}},
		{name: "resources/list", method: "resources/list", params: `{}`, check: func(t *testing.T, r contentResult) {
			got := map[string]string{}
			for _, res := range r.Resources {
				got[res.URI] = res.MimeType
			}
			for uri, mimeType := range map[string]string{
				"issues://labels":                 "text/markdown",
				"test://static-text":              "text/plain",
				"test://static-binary":            "image/png",
				"skill://pdf-processing/SKILL.md": "text/markdown",
			} {
				if got[uri] != mimeType {
					t.Errorf("resources %v; want %s, %s", got, uri, mimeType)
				}
			}
		}},
		{name: "resources/templates/list", method: "resources/templates/list", params: `{}`, check: func(t *testing.T, r contentResult) {
			var got []string
			for _, tpl := range r.ResourceTemplates {
				got = append(got, tpl.URITemplate)
			}
			for _, want := range []string{"issues://issues/{number}", "test://template/{id}/data", "skill://pdf-processing/{+path}"} {
				if !slices.Contains(got, want) {
					t.Errorf("templates %q; want %s", got, want)
				}
			}
		}},
		{name: "resources/read of a file", method: "resources/read", params: `{"uri": "issues://labels"}`, check: func(t *testing.T, r contentResult) {
			if text, _ := only(t, r, "issues://labels", "text/markdown"); text != labels {
				t.Errorf("text %q; want labels.md", text)
			}
		}},
		{name: "resources/read of a template, by the plugin", method: "resources/read", params: `{"uri": "issues://issues/1042"}`, check: func(t *testing.T, r contentResult) {
			if text, _ := only(t, r, "issues://issues/1042", "text/markdown"); !strings.HasPrefix(text, "# #1042 Login page rejects passwords that contain a space\n") ||
				!strings.Contains(text, "- assignee: mona\n") {
				t.Errorf("text %q; want issue 1042 as Markdown", text)
			}
		}},
		// A tool changes what the plugin reads: the next read shows it
		// (a 2026-07-28 client keeps a read for its ttlMs, which for a
		// handler's read must be 0).
		{name: "tools/call that closes the issue", method: "tools/call", params: `{"name": "issue-tracker_close_issue", "arguments": {"number": 1042}}`,
			check: func(t *testing.T, r contentResult) {
				if r.IsError || len(r.Content) == 0 {
					t.Errorf("close_issue: %+v", r)
				}
			}},
		{name: "resources/read after the tool's change", method: "resources/read", params: `{"uri": "issues://issues/1042"}`, check: issueState("closed")},
		{name: "tools/call that reopens the issue", method: "tools/call", params: `{"name": "issue-tracker_reopen_issue", "arguments": {"number": 1042}}`,
			check: func(t *testing.T, r contentResult) {
				if r.IsError || len(r.Content) == 0 {
					t.Errorf("reopen_issue: %+v", r)
				}
			}},
		{name: "resources/read after the reopen", method: "resources/read", params: `{"uri": "issues://issues/1042"}`, check: issueState("open")},
		{name: "resources/read of a template, by the contract", method: "resources/read", params: `{"uri": "test://template/abc/data"}`, check: func(t *testing.T, r contentResult) {
			if text, _ := only(t, r, "test://template/abc/data", "application/json"); text != `{"id":"abc","templateTest":true,"data":"Data for ID: abc"}` {
				t.Errorf("text %q; want the contract's text with id abc", text)
			}
		}},
		{name: "resources/read of a blob", method: "resources/read", params: `{"uri": "test://static-binary"}`, check: func(t *testing.T, r contentResult) {
			if text, blob := only(t, r, "test://static-binary", "image/png"); text != "" || blob != pixel {
				t.Errorf("text %q, blob %q; want pixel.png as the blob", text, blob)
			}
		}},
		{name: "resources/read of a skill's file", method: "resources/read", params: `{"uri": "skill://pdf-processing/references/FORMS.md"}`, check: func(t *testing.T, r contentResult) {
			if text, _ := only(t, r, "skill://pdf-processing/references/FORMS.md", "text/markdown"); text != string(forms) {
				t.Errorf("text %q; want FORMS.md", text)
			}
		}},
		{name: "completion/complete of an enum", method: "completion/complete",
			params: `{"ref": {"type": "ref/prompt", "name": "triage_issue"}, "argument": {"name": "focus", "value": "e"}}`, check: completes("effort")},
		{name: "completion/complete of a template's variable", method: "completion/complete",
			params: `{"ref": {"type": "ref/resource", "uri": "issues://issues/{number}"}, "argument": {"name": "number", "value": "104"}}`,
			check:  completes("1040", "1041", "1042", "1043", "1044")},
		{name: "completion/complete case aside", method: "completion/complete",
			params: `{"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "PAR"}}`,
			check:  completes("paris", "park", "party")},
		{name: "skills/list", method: "skills/list", params: `{}`, check: func(t *testing.T, r contentResult) {
			if len(r.Skills) != 1 {
				t.Fatalf("skills %+v; want pdf-processing", r.Skills)
			}
			skill(t, r.Skills[0])
		}},
		{name: "skills/get", method: "skills/get", params: `{"uri": "skill://pdf-processing/SKILL.md"}`, check: func(t *testing.T, r contentResult) {
			skill(t, r.Skill)
		}},
		{name: "resources/directory/read", method: "resources/directory/read", params: `{"uri": "skill://pdf-processing"}`, check: func(t *testing.T, r contentResult) {
			var got []string
			for _, res := range r.Resources {
				got = append(got, res.URI+" "+res.MimeType)
			}
			want := []string{"skill://pdf-processing/SKILL.md text/markdown", "skill://pdf-processing/references inode/directory", "skill://pdf-processing/templates inode/directory"}
			if !slices.Equal(got, want) {
				t.Errorf("children %q; want %q", got, want)
			}
		}},

		// Bad input.
		{name: "prompts/get of an undeclared argument", method: "prompts/get", params: `{"name": "triage_issue", "arguments": {"number": "1042", "severity": "high"}}`,
			err: &wantRPC{code: -32602, message: `prompt "triage_issue": unknown field "severity"`}},
		{name: "prompts/get of a value outside the enum", method: "prompts/get", params: `{"name": "triage_issue", "arguments": {"number": "1042", "focus": "mood"}}`,
			err: &wantRPC{code: -32602, message: `focus`}},
		{name: "resources/read outside every template", method: "resources/read", params: `{"uri": "test://template/abc"}`,
			err: &wantRPC{code: -32602, message: "Resource not found", uri: "test://template/abc"}},
		{name: "resources/read of a variable against its pattern", method: "resources/read", params: `{"uri": "issues://issues/x"}`,
			err: &wantRPC{code: -32602, message: "must match the regular expression"}},
		{name: "skills/get of no skill", method: "skills/get", params: `{"uri": "skill://nothing/SKILL.md"}`,
			err: &wantRPC{code: -32602, message: "skill://nothing/SKILL.md"}},
	}
}

// issueState checks that a read of issue 1042 says it is in state.
func issueState(state string) func(*testing.T, contentResult) {
	return func(t *testing.T, r contentResult) {
		if len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "\n- state: "+state+"\n") {
			t.Errorf("contents %+v; want issue 1042, %s", r.Contents, state)
		}
	}
}

// runContentSteps runs every step through every client. The steps of a
// client run in order, and the clients one after the other: a tool's
// change is undone before the next client starts.
func runContentSteps(t *testing.T, clients []*contentClient, steps []contentStep) {
	t.Helper()
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			for _, step := range steps {
				t.Run(step.name, func(t *testing.T) {
					if c.noSkills != "" && (strings.HasPrefix(step.method, "skills/") || step.method == "resources/directory/read") {
						t.Skip(c.noSkills)
					}
					ctx, cancel := context.WithTimeout(context.Background(), devWait)
					defer cancel()
					res, err := c.call(ctx, step.method, json.RawMessage(step.params))
					if step.err != nil {
						var rpc *rpcError
						if !errors.As(err, &rpc) {
							t.Fatalf("%s %s = %s, %v; want the error %d %q", step.method, step.params, res, err, step.err.code, step.err.message)
						}
						if rpc.Code != step.err.code || !strings.Contains(rpc.Message, step.err.message) {
							t.Errorf("%s %s: error %v; want %d %q", step.method, step.params, rpc, step.err.code, step.err.message)
						}
						var data struct{ URI string }
						if step.err.uri != "" && rpc.Data != nil && (json.Unmarshal(rpc.Data, &data) != nil || data.URI != step.err.uri) {
							t.Errorf("%s %s: error's data %s; want the URI %s", step.method, step.params, rpc.Data, step.err.uri)
						}
						return
					}
					if err != nil {
						t.Fatalf("%s %s: %v", step.method, step.params, err)
					}
					var r contentResult
					if err := json.Unmarshal(res, &r); err != nil {
						t.Fatalf("%s %s: %v in %s", step.method, step.params, err, res)
					}
					step.check(t, r)
					if t.Failed() {
						t.Logf("%s %s gave %s", step.method, step.params, res)
					}
				})
			}
		})
	}
}

// viaGoSDK decodes params into the go-sdk's type for them and calls f.
func viaGoSDK[P, R any](ctx context.Context, params json.RawMessage, f func(context.Context, *P) (R, error)) (any, error) {
	p := new(P)
	if err := json.Unmarshal(params, p); err != nil {
		return nil, err
	}
	return f(ctx, p)
}

// goSDKContentClient connects a go-sdk client that asks for revision.
func goSDKContentClient(t *testing.T, revision string, transport mcp.Transport) *contentClient {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolc-content", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": elicitedContext}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("go-sdk %s: %v", revision, err)
	}
	t.Cleanup(func() { session.Close() })
	if got := session.InitializeResult().ProtocolVersion; got != revision {
		t.Errorf("go-sdk %s speaks %s", revision, got)
	}
	call := func(ctx context.Context, method string, p json.RawMessage) (any, error) {
		switch method {
		case "prompts/list":
			return viaGoSDK(ctx, p, session.ListPrompts)
		case "prompts/get":
			return viaGoSDK(ctx, p, session.GetPrompt)
		case "resources/list":
			return viaGoSDK(ctx, p, session.ListResources)
		case "resources/templates/list":
			return viaGoSDK(ctx, p, session.ListResourceTemplates)
		case "resources/read":
			return viaGoSDK(ctx, p, session.ReadResource)
		case "completion/complete":
			return viaGoSDK(ctx, p, session.Complete)
		case "tools/call":
			return viaGoSDK(ctx, p, session.CallTool)
		}
		return nil, fmt.Errorf("go-sdk: no call for %s", method)
	}
	return &contentClient{
		name:     "go-sdk " + revision,
		noSkills: "the go-sdk client (v1.8.0) sends only the methods it knows: an unknown one is jsonrpc2.ErrNotHandled",
		call: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			res, err := call(ctx, method, params)
			if wire := (*jsonrpc.Error)(nil); errors.As(err, &wire) {
				return nil, &rpcError{Code: wire.Code, Message: wire.Message, Data: wire.Data}
			}
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}
}

// mcpGoContentClient starts and initializes a mark3labs/mcp-go client
// that asks for revision, with its default options otherwise.
func mcpGoContentClient(t *testing.T, client *mcpgo.Client, revision string) *contentClient {
	t.Helper()
	mcpgo.WithElicitationHandler(answerContext{})(client)
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatalf("mcp-go start: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	var init mcpgotypes.InitializeRequest
	init.Params.ClientInfo = mcpgotypes.Implementation{Name: "toolc-content", Version: "1"}
	init.Params.ProtocolVersion = revision
	if _, err := client.Initialize(ctx, init); err != nil {
		t.Fatalf("mcp-go %s initialize: %v", revision, err)
	}
	if got := client.ProtocolVersion(); got != revision {
		t.Errorf("mcp-go speaks %s, want %s", got, revision)
	}
	call := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "prompts/list":
			var req mcpgotypes.ListPromptsRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.ListPrompts(ctx, req) })
		case "prompts/get":
			var req mcpgotypes.GetPromptRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.GetPrompt(ctx, req) })
		case "resources/list":
			var req mcpgotypes.ListResourcesRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.ListResources(ctx, req) })
		case "resources/templates/list":
			var req mcpgotypes.ListResourceTemplatesRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.ListResourceTemplates(ctx, req) })
		case "resources/read":
			var req mcpgotypes.ReadResourceRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.ReadResource(ctx, req) })
		case "completion/complete":
			var req mcpgotypes.CompleteRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.Complete(ctx, req) })
		case "tools/call":
			var req mcpgotypes.CallToolRequest
			return mcpGoResult(json.Unmarshal(params, &req.Params), func() (any, error) { return client.CallTool(ctx, req) })
		}
		return nil, fmt.Errorf("mcp-go: no call for %s", method)
	}
	// mcp-go turns a JSON-RPC error into one of its sentinel errors,
	// wrapped with the message, and drops the data.
	codes := map[error]int64{
		mcpgotypes.ErrInvalidParams:    -32602,
		mcpgotypes.ErrMethodNotFound:   -32601,
		mcpgotypes.ErrResourceNotFound: -32002,
		mcpgotypes.ErrInternalError:    -32603,
	}
	return &contentClient{
		name:     "mcp-go " + revision,
		noSkills: "mcp-go's client (v1.2.1) has no public call for a method it does not know, and its transport's SendRequest would skip the _meta of a 2026-07-28 request",
		call: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			res, err := call(ctx, method, params)
			for sentinel, code := range codes {
				if errors.Is(err, sentinel) {
					return nil, &rpcError{Code: code, Message: strings.TrimPrefix(err.Error(), sentinel.Error()+": ")}
				}
			}
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}
}

// answerContext is mcp-go's elicitation handler: the context is
// elicitedContext.
type answerContext struct{}

func (answerContext) Elicit(context.Context, mcpgotypes.ElicitationRequest) (*mcpgotypes.ElicitationResult, error) {
	return &mcpgotypes.ElicitationResult{ElicitationResponse: mcpgotypes.ElicitationResponse{
		Action: mcpgotypes.ElicitationResponseActionAccept, Content: map[string]any{"context": elicitedContext},
	}}, nil
}

// mcpGoResult calls f once the params decoded.
func mcpGoResult(decode error, f func() (any, error)) (any, error) {
	if decode != nil {
		return nil, decode
	}
	return f()
}

// tsContentClient runs testdata/tscontent.mjs with args: a URL, or a
// command that speaks MCP on stdio, which it starts in the repository's
// root with this environment.
func tsContentClient(t *testing.T, args ...string) *contentClient {
	t.Helper()
	node, sdk := tsSDK(t)
	script, err := filepath.Abs("testdata/tscontent.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "TOOLC_TS_SDK="+sdk, "TOOLC_CACHE="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(),
		"TOOLC_ELICITED_CONTEXT="+elicitedContext)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the TypeScript client's stderr:\n%s", stderr)
		}
	})
	type event struct {
		Event, Message, Protocol string
		Code                     int64
		Result, Data             json.RawMessage
	}
	events := make(chan event, 1)
	go func() {
		defer close(events)
		lines := bufio.NewScanner(out)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			var e event
			if json.Unmarshal(lines.Bytes(), &e) == nil {
				events <- e
			}
		}
	}()
	next := func(ctx context.Context) (event, error) {
		select {
		case e, ok := <-events:
			if !ok {
				return e, errors.New("the TypeScript client ended")
			}
			return e, nil
		case <-ctx.Done():
			return event{}, fmt.Errorf("the TypeScript client did not answer: %w", ctx.Err())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	if e, err := next(ctx); err != nil || e.Event != "connected" {
		t.Fatalf("the TypeScript client: %+v, %v", e, err)
	} else if strings.HasPrefix(args[0], "http") && e.Protocol != "2025-11-25" {
		t.Errorf("the TypeScript client speaks %q, want 2025-11-25", e.Protocol)
	}
	var mu sync.Mutex // one request at a time: the answers come in order
	return &contentClient{
		name: "typescript-sdk",
		call: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			defer mu.Unlock()
			line, err := json.Marshal(map[string]any{"method": method, "params": params})
			if err != nil {
				return nil, err
			}
			if _, err := in.Write(append(line, '\n')); err != nil {
				return nil, err
			}
			e, err := next(ctx)
			switch {
			case err != nil:
				return nil, err
			case e.Event == "error" && e.Code != 0:
				// McpError's message is "MCP error CODE: MESSAGE".
				return nil, &rpcError{Code: e.Code, Message: strings.TrimPrefix(e.Message, fmt.Sprintf("MCP error %d: ", e.Code)), Data: nullAsNil(e.Data)}
			case e.Event == "error":
				return nil, fmt.Errorf("the TypeScript client: %s", e.Message)
			}
			return e.Result, nil
		},
	}
}

func nullAsNil(m json.RawMessage) json.RawMessage {
	if string(m) == "null" {
		return nil
	}
	return m
}
