package upstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"
)

// askingClient connects a go-sdk client that answers every question, to
// toolc's MCP server of rt at the revision; asked counts the questions.
func askingClient(t *testing.T, rt *runtime.Runtime, revision string, asked *atomic.Int64) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(rt, mcpserver.New(rt, mcpserver.Options{}), mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "asking-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if r.Params.Message != "Your name?" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "hi from the model"}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// httpAsker serves the test server at revision over Streamable HTTP and
// serves it as an upstream behind a runtime.
func httpAsker(t *testing.T, revision string) (*runtime.Runtime, *upstream.Server) {
	t.Helper()
	srv := newTestServer("ask-" + revision)
	// go-sdk serves 2026-07-28 over HTTP statelessly only: a stateful
	// handler answers no server/discover, and its clients fall back.
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: revision >= "2026-07-28"}))
	t.Cleanup(up.Close)
	svc := contract(t, &catalog.Upstream{URL: up.URL})
	svc.Dir = t.TempDir()
	s, err := upstream.Start(context.Background(), svc, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(time.Second) })
	rt := runtime.New(runtime.Options{CallTimeout: 30 * time.Second})
	cat := &catalog.Catalog{Services: []*catalog.Service{svc}}
	if _, err := upstream.Swap(rt, cat, map[string]*upstream.Server{"up": s}, map[string]runtime.Dispatcher{"up": s}); err != nil {
		t.Fatal(err)
	}
	return rt, s
}

// TestUpstreamAsksTheClient: an upstream server that asks its client for
// a form, a completion and its roots in the middle of a call reaches
// toolc's own client, whichever revision each side speaks: the server's
// questions arrive as requests over its session (2025-11-25) or as an
// InputRequiredResult (2026-07-28), and reach the client over its session
// or as MRTR rounds. The server's tool answers with what it was told.
func TestUpstreamAsksTheClient(t *testing.T) {
	const want = "name=Ada model=hi from the model root=file:///work/project"
	for _, upRev := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run("upstream "+upRev+" over "+transport, func(t *testing.T) {
				var rt *runtime.Runtime
				var srv *upstream.Server
				if transport == "stdio" {
					f := start(t, "ask-"+upRev, nil)
					rt, srv = f.rt, f.srv
				} else {
					rt, srv = httpAsker(t, upRev)
				}
				if got := srv.ProtocolVersion(); got != upRev {
					t.Fatalf("the upstream speaks %s, want %s", got, upRev)
				}
				for _, clientRev := range []string{"2025-11-25", "2026-07-28"} {
					t.Run("client "+clientRev, func(t *testing.T) {
						var asked atomic.Int64
						session := askingClient(t, rt, clientRev, &asked)
						if got := session.InitializeResult().ProtocolVersion; got != clientRev {
							t.Fatalf("client speaks %s, want %s", got, clientRev)
						}
						ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						defer cancel()
						res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "up_ask", Arguments: map[string]any{}})
						if err != nil {
							t.Fatalf("up_ask: %v", err)
						}
						if got := textOf(res); res.IsError || got != want {
							t.Errorf("up_ask = %q (error %v), want %q", got, res.IsError, want)
						}
						if n := asked.Load(); n != 2 {
							t.Errorf("the client was asked %d questions, want 2 (and its roots)", n)
						}
					})
				}
			})
		}
	}
}

// TestUpstreamAskWithoutClient: a call that no MCP client makes (toolc
// call, /v1/call) cannot answer an upstream's question; the server is
// told the capability is missing, and the call says so.
func TestUpstreamAskWithoutClient(t *testing.T) {
	for _, upRev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(upRev, func(t *testing.T) {
			f := start(t, "ask-"+upRev, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := f.rt.Call(ctx, "ask", json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(text(res), "capability") {
				t.Errorf("ask without a client = %+v, want an error naming the missing capability", res)
			}
			// The server goes on.
			if r := f.call(t, "echo", `{"text":"still here"}`); r.IsError || text(r) != "still here" {
				t.Errorf("echo after = %q", text(r))
			}
		})
	}
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "")
}

// TestUpstreamAskParked: a call whose server asked a question waits,
// parked, for the round that brings the answer; past the answer timeout
// it is cancelled, and a round that brings an answer then, or to a call
// this process never parked (another replica's), is told why.
func TestUpstreamAskParked(t *testing.T) {
	// Long enough for the test's next round under load, short enough to
	// wait out.
	const answerTimeout = 3 * time.Second
	f := start(t, "ask-2026-07-28", func(_ *catalog.Upstream, o *upstream.Options) { o.AnswerTimeout = answerTimeout })
	in := &plugins.Input{Elicitation: true, Sampling: true, Roots: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.rt.Call(plugins.WithInput(ctx, in), "ask", json.RawMessage(`{}`))
	if err != nil || len(res.InputRequests) != 3 {
		t.Fatalf("first round = %+v, %v; want the server's three questions", res, err)
	}
	for _, q := range res.InputRequests {
		if !strings.HasPrefix(q.ID, "upstream-") || q.Method == "" || len(q.Params) == 0 {
			t.Errorf("question %+v", q)
		}
	}
	answers := func(qs []plugins.InputRequest) *plugins.Input { return answersTo(qs, "Grace") }
	// Answered in time, the call resumes and finishes.
	res, err = f.rt.Call(plugins.WithInput(ctx, answers(res.InputRequests)), "ask", json.RawMessage(`{}`))
	if err != nil || res.IsError || text(res) != "name=Grace model=yo root=file:///r" {
		t.Fatalf("second round = %+v, %v", res, err)
	}
	// Not answered in time, it is cancelled, and a late answer is told.
	res, err = f.rt.Call(plugins.WithInput(ctx, in), "ask", json.RawMessage(`{}`))
	if err != nil || len(res.InputRequests) != 3 {
		t.Fatalf("first round = %+v, %v", res, err)
	}
	time.Sleep(answerTimeout + time.Second)
	for _, tc := range []struct {
		name string
		qs   []plugins.InputRequest
	}{
		{"late", res.InputRequests},
		{"another replica's", []plugins.InputRequest{{ID: "upstream-0123456789abcdef01234567", Method: plugins.MethodListRoots, Params: json.RawMessage(`{}`)}}},
	} {
		r, err := f.rt.Call(plugins.WithInput(ctx, answers(tc.qs)), "ask", json.RawMessage(`{}`))
		if err != nil || !r.IsError || !strings.Contains(text(r), "is no longer waiting for their answers") {
			t.Errorf("%s answers = %+v, %v", tc.name, r, err)
		}
	}
	if r := f.call(t, "echo", `{"text":"on"}`); r.IsError || text(r) != "on" {
		t.Errorf("echo after = %q", text(r))
	}
}

// TestUpstreamAskAmbiguous: over a 2025-11-25 session, a server's request
// names no call; with two calls in flight toolc cannot tell whose it is,
// and refuses it, saying why, rather than asking the wrong caller.
func TestUpstreamAskAmbiguous(t *testing.T) {
	f := start(t, "ask-2025-11-25", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The slow call runs until the test ends it.
	slowCtx, endSlow := context.WithCancel(ctx)
	defer endSlow()
	slow := make(chan error, 1)
	go func() {
		_, err := f.rt.Call(slowCtx, "slow", json.RawMessage(`{"ms":60000}`))
		slow <- err
	}()
	// The slow call is in flight once the server has counted it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(text(f.call(t, "stats", `{}`)), "calls=1") {
		if time.Now().After(deadline) {
			t.Fatal("the slow call never reached the server")
		}
		time.Sleep(10 * time.Millisecond)
	}
	in := &plugins.Input{Elicitation: true, Sampling: true, Roots: true}
	res, err := f.rt.Call(plugins.WithInput(ctx, in), "ask", json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(text(res), "cannot tell which of its 2 calls in flight") {
		t.Errorf("ask beside another call = %+v, %v", res, err)
	}
	endSlow()
	<-slow
}

// answersTo answers the questions as a client would: the name, "yo", and
// the root file:///r.
func answersTo(qs []plugins.InputRequest, name string) *plugins.Input {
	out := &plugins.Input{Elicitation: true, Sampling: true, Roots: true}
	for _, q := range qs {
		var r string
		switch q.Method {
		case plugins.MethodElicit:
			r = `{"action":"accept","content":{"name":"` + name + `"}}`
		case plugins.MethodCreateMessage:
			r = `{"role":"assistant","model":"m","content":{"type":"text","text":"yo"}}`
		case plugins.MethodListRoots:
			r = `{"roots":[{"uri":"file:///r"}]}`
		}
		out.Answers = append(out.Answers, plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: json.RawMessage(r)})
	}
	return out
}

// TestUpstreamAskRelatedOverHTTP: over Streamable HTTP a 2025-11-25
// server sends a call's questions on that call's own stream, so that with
// several calls in flight each question reaches its own call's caller.
func TestUpstreamAskRelatedOverHTTP(t *testing.T) {
	rt, _ := httpAsker(t, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := []string{"Ada", "Grace", "Barbara"}
	got := make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := &plugins.Input{Elicitation: true, Sampling: true, Roots: true}
			var all []plugins.Answer
			for round := 0; round < 8; round++ {
				res, err := rt.Call(plugins.WithInput(ctx, in), "ask", json.RawMessage(`{}`))
				if err != nil {
					got[i] = err.Error()
					return
				}
				if len(res.InputRequests) == 0 {
					got[i] = text(res)
					return
				}
				all = append(all, answersTo(res.InputRequests, name).Answers...)
				in = &plugins.Input{Elicitation: true, Sampling: true, Roots: true, Answers: all}
			}
			got[i] = "too many rounds"
		}()
	}
	wg.Wait()
	for i, name := range names {
		if want := "name=" + name + " model=yo root=file:///r"; got[i] != want {
			t.Errorf("call %d = %q, want %q", i, got[i], want)
		}
	}
}

// TestUpstreamAsksWithoutParams: a roots/list with no params at all, as
// most servers send it, is passed on like any question.
func TestUpstreamAsksWithoutParams(t *testing.T) {
	f := start(t, "ask-2025-11-25", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := &plugins.Input{Elicitation: true, Sampling: true, Roots: true}
	res, err := f.rt.Call(plugins.WithInput(ctx, in), "roots", json.RawMessage(`{}`))
	if err != nil || len(res.InputRequests) != 1 || res.InputRequests[0].Method != plugins.MethodListRoots {
		t.Fatalf("first round = %+v, %v; want the roots question", res, err)
	}
	res, err = f.rt.Call(plugins.WithInput(ctx, answersTo(res.InputRequests, "")), "roots", json.RawMessage(`{}`))
	if err != nil || res.IsError || text(res) != "file:///r" {
		t.Errorf("second round = %+v, %v", res, err)
	}
}
