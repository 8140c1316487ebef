package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The tests of handlers that ask their client (plugins.Elicit, Sample,
// Roots): real go-sdk clients at 2026-07-28 (multi round-trip requests)
// and at 2025-11-25 (the relay over the session), and raw requests with
// every kind of bad requestState.

var askFixture struct {
	once sync.Once
	cat  *catalog.Catalog
	err  error
}

func askCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	askFixture.once.Do(func() {
		res, err := compiler.Compile(compiler.Config{}, "./testdata/ask")
		switch {
		case err != nil:
			askFixture.err = err
		case res.HasErrors():
			askFixture.err = fmt.Errorf("testdata/ask does not compile: %v", res.Diagnostics)
		default:
			askFixture.cat = res.Catalog
		}
	})
	if askFixture.err != nil {
		t.Fatal(askFixture.err)
	}
	return askFixture.cat
}

var nameForm = plugins.Form{Message: "What is your name?", Schema: json.RawMessage(
	`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}

// askers are the ask service's handlers; answered counts the calls whose
// handler got an answer, so that a test sees what reached a handler.
type askers struct{ answered atomic.Int64 }

func nameOf(res *plugins.ElicitResult) string {
	var v struct{ Name, Color string }
	_ = res.Decode(&v)
	return v.Name + v.Color
}

func (a *askers) handlers() []plugins.Handler {
	return []plugins.Handler{
		plugins.Handle("greet", func(ctx context.Context, req struct{ Greeting string }) (*plugins.Result, error) {
			res, err := plugins.Elicit(ctx, "name", nameForm)
			if err != nil {
				return nil, err
			}
			a.answered.Add(1)
			return plugins.Text(req.Greeting + ", " + nameOf(res) + "!"), nil
		}),
		plugins.HandlePrompt("welcome", func(ctx context.Context, args struct{ Tone string }) ([]plugins.PromptMessage, error) {
			res, err := plugins.Elicit(ctx, "name", nameForm)
			if err != nil {
				return nil, err
			}
			a.answered.Add(1)
			return []plugins.PromptMessage{{Role: "user", Content: plugins.TextContent("Write a " + args.Tone + " welcome for " + nameOf(res))}}, nil
		}),
		plugins.Handle("plain", func(context.Context, struct{}) (*plugins.Result, error) {
			return plugins.Text("Hello, Ada!"), nil
		}),
		plugins.Handle("trio", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			who, err1 := plugins.Elicit(ctx, "name", nameForm)
			poem, err2 := plugins.Sample(ctx, "poem", plugins.SampleRequest{Messages: []plugins.SamplingMessage{plugins.UserText("A haiku")}, MaxTokens: 20})
			roots, err3 := plugins.Roots(ctx, "dirs")
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, err
			}
			a.answered.Add(1)
			return plugins.Text(fmt.Sprintf("%s / %s / %d roots, %s", nameOf(who), poem.Text(), len(roots), roots[0].URI)), nil
		}),
		plugins.Handle("steps", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			first, err := plugins.Elicit(ctx, "step1", nameForm)
			if err != nil {
				return nil, err
			}
			second, err := plugins.Elicit(ctx, "step2", plugins.Form{Message: "Your favorite color?", Schema: json.RawMessage(
				`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)})
			if err != nil {
				return nil, err
			}
			a.answered.Add(1)
			return plugins.Text(nameOf(first) + " likes " + nameOf(second)), nil
		}),
	}
}

// serveAsk serves the ask service in process over HTTP.
func serveAsk(t testing.TB, opts mcpserver.Options, httpOpts ...httpapi.Options) (*httptest.Server, *askers) {
	t.Helper()
	ho := httpapi.Options{}
	if len(httpOpts) > 0 {
		ho = httpOpts[0]
	}
	a := &askers{}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(askCatalog(t), map[string]runtime.Dispatcher{"ask": runtime.Local(a.handlers()...)}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, opts), ho))
	t.Cleanup(ts.Close)
	return ts, a
}

// retries counts the requests that carry inputResponses: the second and
// later rounds of 2026-07-28 calls.
type retries struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (r *retries) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"inputResponses"`)) {
			r.n.Add(1)
		}
	}
	return r.next.RoundTrip(req)
}

// answeringClient connects a go-sdk client at revision that answers every
// question: the name Ada, the color blue, a poem, and one root. asked
// counts the questions it answered, rounds the calls it made again.
func answeringClient(t testing.TB, url, revision string, asked *atomic.Int64, rounds *retries) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "answering", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if strings.Contains(req.Params.Message, "color") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "blue"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "old pond"}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///src", Name: "src"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}
	if rounds != nil {
		transport.HTTPClient = &http.Client{Transport: rounds}
	}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// TestAskRoundTrips: one handler API, both ways of asking. A client of
// 2026-07-28 gets InputRequiredResults and calls again; a client of
// 2025-11-25 is asked over its session. Either way the tool finishes.
func TestAskRoundTrips(t *testing.T) {
	ts, a := serveAsk(t, mcpserver.Options{})
	for _, rev := range runtimetest.Revisions {
		t.Run(rev, func(t *testing.T) {
			var asked atomic.Int64
			rounds := &retries{next: http.DefaultTransport}
			s := answeringClient(t, ts.URL, rev, &asked, rounds)
			for _, tc := range []struct {
				tool  string
				args  map[string]any
				want  string
				asked int64
			}{
				{"greet", map[string]any{}, "Hello, Ada!", 1},
				{"greet", map[string]any{"greeting": "Hi"}, "Hi, Ada!", 1},
				{"trio", map[string]any{}, "Ada / old pond / 1 roots, file:///src", 2}, // roots are not a handler's to count
				{"steps", map[string]any{}, "Ada likes blue", 2},
			} {
				before, answered := asked.Load(), a.answered.Load()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				cancel()
				if err != nil || res.IsError || mcpText(res) != tc.want {
					t.Errorf("%s = %v, %v; want %q", tc.tool, res, err, tc.want)
					continue
				}
				if got := asked.Load() - before; got != tc.asked {
					t.Errorf("%s: the client answered %d questions, want %d", tc.tool, got, tc.asked)
				}
				if got := a.answered.Load() - answered; got != 1 {
					t.Errorf("%s: %d handler runs finished with the answers, want 1", tc.tool, got)
				}
			}
			// 2026-07-28 calls again with the answers (greet twice, trio,
			// steps twice); a session is asked over the session instead.
			want := map[bool]int64{true: 5, false: 0}[rev >= "2026-07-28"]
			if got := rounds.n.Load(); got != want {
				t.Errorf("%d calls carried inputResponses, want %d", got, want)
			}
		})
	}
}

// TestAskFromPrompt: a prompt's handler asks as a tool's does, in both
// revisions: a 2026-07-28 prompts/get gets an InputRequiredResult and is
// sent again with the answer, a 2025-11-25 one is asked over its session.
func TestAskFromPrompt(t *testing.T) {
	ts, a := serveAsk(t, mcpserver.Options{})
	for _, rev := range runtimetest.Revisions {
		t.Run(rev, func(t *testing.T) {
			var asked atomic.Int64
			rounds := &retries{next: http.DefaultTransport}
			s := answeringClient(t, ts.URL, rev, &asked, rounds)
			answered := a.answered.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "welcome", Arguments: map[string]string{"tone": "dry"}})
			if err != nil {
				t.Fatalf("prompts/get welcome: %v", err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "Write a dry welcome for Ada" {
				t.Errorf("prompts/get welcome = %+v", res.Messages)
			}
			if got := asked.Load(); got != 1 {
				t.Errorf("the client answered %d questions, want 1", got)
			}
			if got := a.answered.Load() - answered; got != 1 {
				t.Errorf("%d handler runs finished with the answer, want 1", got)
			}
			want := map[bool]int64{true: 1, false: 0}[rev >= "2026-07-28"]
			if got := rounds.n.Load(); got != want {
				t.Errorf("%d requests carried inputResponses, want %d", got, want)
			}
		})
	}

	// A requestState is bound to what it was issued for: a tool's state
	// does not resume the prompt, nor the prompt's another argument.
	url := ts.URL
	getParams := func(args map[string]any, state string, responses map[string]any) map[string]any {
		p := callParams("welcome", nil, state, responses)
		delete(p, "arguments")
		p["arguments"] = args
		return p
	}
	r := runtimetest.RPC(t, url, "prompts/get", getParams(map[string]any{}, "", nil), v2026)
	state, _ := r.Result["requestState"].(string)
	if r.Error != nil || r.Result["resultType"] != "input_required" || state == "" {
		t.Fatalf("round 1 = %d %+v %+v, want an InputRequiredResult with a requestState", r.Status, r.Result, r.Error)
	}
	r = runtimetest.RPC(t, url, "prompts/get", getParams(map[string]any{}, state, ada), v2026)
	if r.Error != nil || r.Result["resultType"] != "complete" {
		t.Fatalf("round 2 = %d %+v %+v, want the prompt", r.Status, r.Result, r.Error)
	}
	for name, p := range map[string]map[string]any{
		"a tool's state":         getParams(map[string]any{}, firstRound(t, url, map[string]any{}), ada),
		"another argument":       getParams(map[string]any{"tone": "cold"}, state, ada),
		"a prompt's as a tool's": callParams("greet", map[string]any{}, state, ada),
	} {
		method := "prompts/get"
		if p["name"] == "greet" {
			method = "tools/call"
		}
		before := a.answered.Load()
		r := runtimetest.RPC(t, url, method, p, v2026)
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %s = %d %+v %+v, want -32602", name, method, r.Status, r.Result, r.Error)
		}
		if a.answered.Load() != before {
			t.Errorf("%s: a handler ran with the answer", name)
		}
	}

	// A client without elicitation is told what the prompt needs.
	c := runtimetest.ConnectMCPAt(t, ts.URL, "2026-07-28")
	_, err := c.Session.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "welcome"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(rpcErr.Message, "the prompt needs") {
		t.Errorf("prompts/get without elicitation = %v, want error %d", err, mcp.CodeMissingRequiredClientCapabilities)
	}
}

// TestAskMissingCapability: a client without elicitation gets MCP's
// MissingRequiredClientCapability error naming it, in both revisions.
func TestAskMissingCapability(t *testing.T) {
	ts, a := serveAsk(t, mcpserver.Options{})
	for _, rev := range runtimetest.Revisions {
		c := runtimetest.ConnectMCPAt(t, ts.URL, rev) // declares roots only
		_, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities {
			t.Errorf("%s: greet = %v, want error %d", rev, err, mcp.CodeMissingRequiredClientCapabilities)
			continue
		}
		var data struct {
			RequiredCapabilities map[string]any `json:"requiredCapabilities"`
		}
		if json.Unmarshal(rpcErr.Data, &data) != nil || data.RequiredCapabilities["elicitation"] == nil {
			t.Errorf("%s: error data %s, want requiredCapabilities.elicitation", rev, rpcErr.Data)
		}
	}
	if n := a.answered.Load(); n != 0 {
		t.Errorf("%d handler runs got an answer", n)
	}

	// With --stateless a legacy client has no session to be asked over,
	// even when it declares elicitation: the ask fails in the same way.
	ts, _ = serveAsk(t, mcpserver.Options{}, httpapi.Options{MCP: mcpserver.HTTPOptions{Stateless: true}})
	var asked atomic.Int64
	s := answeringClient(t, ts.URL, "2025-11-25", &asked, &retries{next: http.DefaultTransport})
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities || asked.Load() != 0 {
		t.Errorf("stateless 2025-11-25: greet = %v (asked %d), want error %d", err, asked.Load(), mcp.CodeMissingRequiredClientCapabilities)
	}
}

// v2026 is the header of every 2026-07-28 request.
var v2026 = map[string]string{"MCP-Protocol-Version": "2026-07-28"}

// callParams are tools/call params at 2026-07-28, from a client that can
// answer every kind of question.
func callParams(tool string, args map[string]any, state string, responses map[string]any) map[string]any {
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
	p := map[string]any{"name": tool, "arguments": args, "_meta": meta}
	if state != "" {
		p["requestState"] = state
	}
	if responses != nil {
		p["inputResponses"] = responses
	}
	return p
}

var ada = map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}

// firstRound calls greet at url and returns its requestState.
func firstRound(t *testing.T, url string, args map[string]any) string {
	t.Helper()
	r := runtimetest.RPC(t, url, "tools/call", callParams("greet", args, "", nil), v2026)
	state, _ := r.Result["requestState"].(string)
	if r.Error != nil || r.Result["resultType"] != "input_required" || state == "" {
		t.Fatalf("round 1 = %d %+v %+v, want an InputRequiredResult with a requestState", r.Status, r.Result, r.Error)
	}
	if q, _ := r.Result["inputRequests"].(map[string]any)["name"].(map[string]any); q["method"] != "elicitation/create" {
		t.Fatalf("round 1 asked %v", r.Result["inputRequests"])
	}
	return state
}

// TestRequestStateBadInput: a requestState that is forged, altered,
// expired, sealed under another key or issued for another call is refused
// with -32602 (HTTP 400) before any handler runs; an answer to a question
// the state did not ask is ignored, and the question asked again. A state
// from a replica that shares the key is accepted.
func TestRequestStateBadInput(t *testing.T) {
	secret := []byte("a shared secret of at least thirty-two bytes")
	ts, a := serveAsk(t, mcpserver.Options{StateSecret: secret})
	replica, _ := serveAsk(t, mcpserver.Options{StateSecret: secret})
	stranger, _ := serveAsk(t, mcpserver.Options{StateSecret: []byte("another secret, also thirty-two bytes long")})
	expiring, _ := serveAsk(t, mcpserver.Options{StateSecret: secret, StateTTL: time.Nanosecond})

	state := firstRound(t, ts.URL, map[string]any{})
	mid := len(state) / 2
	altered := state[:mid] + map[bool]string{true: "B", false: "A"}[state[mid] == 'A'] + state[mid+1:]

	refused := []struct {
		name, url, tool, state string
		args                   map[string]any
		want                   string
	}{
		{"forged", ts.URL, "greet", "v1.bm90IGEgc3RhdGUgb2YgdGhpcyBzZXJ2ZXIncw", map[string]any{}, "not issued by this server"},
		{"altered", ts.URL, "greet", altered, map[string]any{}, "not issued by this server"},
		{"tampered suffix", ts.URL, "greet", state + "-TAMPERED", map[string]any{}, "not issued by this server"},
		{"not ours at all", ts.URL, "greet", "<opaque-server-state>", map[string]any{}, "not a requestState"},
		{"too large", ts.URL, "greet", "v1." + strings.Repeat("A", 70<<10), map[string]any{}, "over"},
		{"another key", stranger.URL, "greet", state, map[string]any{}, "not issued by this server"},
		{"another tool", ts.URL, "steps", state, map[string]any{}, "another call"},
		{"other arguments", ts.URL, "greet", state, map[string]any{"greeting": "Hi"}, "another call"},
		{"expired", expiring.URL, "greet", firstRound(t, expiring.URL, map[string]any{}), map[string]any{}, "expired"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := runtimetest.RPC(t, tc.url, "tools/call", callParams(tc.tool, tc.args, tc.state, ada), v2026)
			if r.Status != http.StatusBadRequest || r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r.Error.Message, tc.want) {
				t.Errorf("= %d %+v %+v; want 400, -32602 and %q", r.Status, r.Result, r.Error, tc.want)
			}
		})
	}
	if n := a.answered.Load(); n != 0 {
		t.Fatalf("a handler got an answer under a refused state (%d)", n)
	}

	// Answers to questions the handler does not ask, or of the wrong
	// kind, reach no handler: the question is asked again.
	for name, tc := range map[string]struct {
		state     string
		responses map[string]any
	}{
		"unasked question":         {state, map[string]any{"other": ada["name"]}},
		"unasked, no state":        {"", map[string]any{"other": ada["name"]}},
		"wrong kind, no state":     {"", map[string]any{"name": map[string]any{"roots": []any{}}}},
		"not the form's, no state": {"", map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": 42}}}},
		"wrong kind":               {state, map[string]any{"name": map[string]any{"roots": []any{}}}},
		"not the form's":           {state, map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": 42}}}},
		"form left empty":          {state, map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{}}}},
	} {
		r := runtimetest.RPC(t, ts.URL, "tools/call", callParams("greet", map[string]any{}, tc.state, tc.responses), v2026)
		if r.Error != nil || r.Result["resultType"] != "input_required" {
			t.Errorf("%s: %d %+v %+v, want the question asked again", name, r.Status, r.Result, r.Error)
		}
	}
	if n := a.answered.Load(); n != 0 {
		t.Fatalf("a handler got an answer to a question it never asked (%d)", n)
	}

	// The honest round trip works, on this replica and on another that
	// shares the key.
	for _, url := range []string{ts.URL, replica.URL} {
		r := runtimetest.RPC(t, url, "tools/call", callParams("greet", map[string]any{}, state, ada), v2026)
		if r.Error != nil || r.Result["resultType"] != "complete" || !strings.Contains(fmt.Sprint(r.Result["content"]), "Hello, Ada!") {
			t.Errorf("round 2 at %s = %d %+v %+v", url, r.Status, r.Result, r.Error)
		}
	}
}

// TestAnswersWithoutState: a client may answer, in its first request and
// without a requestState, the questions the handler asks; the handler
// gets those answers, held to its own questions, and responses it does
// not ask for are ignored (MCP 2026-07-28, multi round-trip requests:
// "the server SHOULD ignore any information it does not recognize or
// need"). Answers that fit a chain of questions finish the call in one
// request.
func TestAnswersWithoutState(t *testing.T) {
	ts, a := serveAsk(t, mcpserver.Options{})
	extra := map[string]any{
		"name":               ada["name"],
		"unknown_extra_key":  map[string]any{"action": "accept", "content": map[string]any{"foo": "bar"}},
		"another_unexpected": map[string]any{"action": "accept", "content": map[string]any{"baz": 123}},
	}
	r := runtimetest.RPC(t, ts.URL, "tools/call", callParams("greet", map[string]any{}, "", extra), v2026)
	if r.Error != nil || r.Result["resultType"] != "complete" || !strings.Contains(fmt.Sprint(r.Result["content"]), "Hello, Ada!") {
		t.Errorf("greet with the answer and extra keys = %d %+v %+v, want Hello, Ada!", r.Status, r.Result, r.Error)
	}
	both := map[string]any{"step1": ada["name"], "step2": map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}}
	r = runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, "", both), v2026)
	if r.Error != nil || !strings.Contains(fmt.Sprint(r.Result["content"]), "Ada likes blue") {
		t.Errorf("steps with both answers = %d %+v %+v, want Ada likes blue", r.Status, r.Result, r.Error)
	}
	// Only step1 answered: step2 is asked, and the state carries step1.
	r = runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, "", map[string]any{"step1": ada["name"]}), v2026)
	s, _ := r.Result["requestState"].(string)
	if r.Result["resultType"] != "input_required" || s == "" {
		t.Fatalf("steps with step1 = %+v %+v, want step2 asked", r.Result, r.Error)
	}
	r = runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, s, map[string]any{"step2": both["step2"]}), v2026)
	if r.Error != nil || !strings.Contains(fmt.Sprint(r.Result["content"]), "Ada likes blue") {
		t.Errorf("steps round 2 = %+v %+v, want Ada likes blue", r.Result, r.Error)
	}
	if n := a.answered.Load(); n != 3 {
		t.Errorf("handlers finished with answers %d times, want 3", n)
	}
}

// TestRequestStateCarriesEarlierAnswers: the answer of round 1 reaches
// round 3 inside the sealed state, not from the client: the last round
// carries only the answer to its own question.
func TestRequestStateCarriesEarlierAnswers(t *testing.T) {
	ts, _ := serveAsk(t, mcpserver.Options{})
	r := runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, "", nil), v2026)
	s1, _ := r.Result["requestState"].(string)
	r = runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, s1, map[string]any{"step1": ada["name"]}), v2026)
	s2, _ := r.Result["requestState"].(string)
	if r.Result["resultType"] != "input_required" || s2 == "" || s2 == s1 {
		t.Fatalf("round 2 = %+v %+v", r.Result, r.Error)
	}
	// A client that replays step1 with another name does not change it.
	blue := map[string]any{"step2": map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}},
		"step1": map[string]any{"action": "accept", "content": map[string]any{"name": "Mallory"}}}
	r = runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, s2, blue), v2026)
	if r.Error != nil || !strings.Contains(fmt.Sprint(r.Result["content"]), "Ada likes blue") {
		t.Errorf("round 3 = %+v %+v, want Ada likes blue", r.Result, r.Error)
	}
}

// BenchmarkMRTRRound is the added cost of one round of questions: each
// iteration makes, from one go-sdk client over Streamable HTTP, a plain
// call (plain) and a call whose handler asks one elicitation (greet), the
// two interleaved so that both see the same moment of the machine's load.
// At 2026-07-28 the asking call is two requests (InputRequiredResult with
// a sealed requestState, then the retry that opens it); at 2025-11-25 it is
// one request and an elicitation/create over the session. Handlers run in
// process; with a plugin each round adds one plugin call.
func BenchmarkMRTRRound(b *testing.B) {
	ts, _ := serveAsk(b, mcpserver.Options{})
	for _, rev := range runtimetest.Revisions {
		b.Run("rev="+rev, func(b *testing.B) {
			var asked atomic.Int64
			s := answeringClient(b, ts.URL, rev, &asked, nil)
			ctx := context.Background()
			call := func(tool string) time.Duration {
				start := time.Now()
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
				if err != nil || mcpText(res) != "Hello, Ada!" {
					b.Fatalf("%s = %v, %v", tool, res, err)
				}
				return time.Since(start)
			}
			var plain, asking []time.Duration
			for b.Loop() {
				plain = append(plain, call("plain"))
				asking = append(asking, call("greet"))
			}
			p, a := median(plain), median(asking)
			b.ReportMetric(float64(p.Microseconds()), "plain-us")
			b.ReportMetric(float64(a.Microseconds()), "asking-us")
			b.ReportMetric(float64((a - p).Microseconds()), "round-us")
			b.ReportMetric(float64(a)/float64(p), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestRequestStateBoundToCaller: with OAuth, a requestState resumes a call
// only for the caller it was issued to. Another user's token, or the same
// user's through another client, holding the state (from a log, a shared
// proxy) is refused before any handler runs, so it neither finishes the
// call nor hands the handler the first caller's earlier answers, which the
// state carries.
func TestRequestStateBoundToCaller(t *testing.T) {
	iss := runtimetest.NewIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: runtimetest.TestResource})
	if err != nil {
		t.Fatal(err)
	}
	ts, a := serveAsk(t, mcpserver.Options{}, httpapi.Options{OAuth: v})
	as := func(token string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Authorization": "Bearer " + token}
	}
	alice, bob := iss.Token(t, jose.RS256, "alice", ""), iss.Token(t, jose.ES256, "bob", "")
	otherClient := iss.TokenFor(t, "alice", "another-client")

	r := runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, "", map[string]any{"step1": ada["name"]}), as(alice))
	state, _ := r.Result["requestState"].(string)
	if r.Error != nil || r.Result["resultType"] != "input_required" || state == "" {
		t.Fatalf("alice's first round = %d %+v %+v", r.Status, r.Result, r.Error)
	}
	blue := map[string]any{"step2": map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}}
	for name, token := range map[string]string{"another user": bob, "another client": otherClient} {
		r := runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, state, blue), as(token))
		if r.Status != http.StatusBadRequest || r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r.Error.Message, "issued to another caller") {
			t.Errorf("%s with alice's state = %d %+v %+v; want 400, -32602, issued to another caller", name, r.Status, r.Result, r.Error)
		}
	}
	if n := a.answered.Load(); n != 0 {
		t.Fatalf("a handler finished with alice's answers for another caller (%d)", n)
	}
	r = runtimetest.RPC(t, ts.URL, "tools/call", callParams("steps", map[string]any{}, state, blue), as(alice))
	if r.Error != nil || !strings.Contains(fmt.Sprint(r.Result["content"]), "Ada likes blue") {
		t.Errorf("alice's second round = %d %+v %+v, want Ada likes blue", r.Status, r.Result, r.Error)
	}
}
