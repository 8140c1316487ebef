package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests run real MCP servers, made with go-sdk: this test binary,
// started again with $TOOLC_UPSTREAM_TEST_MODE set, serves over stdio
// (see TestMain); newTestServer serves over Streamable HTTP.

const modeEnv = "TOOLC_UPSTREAM_TEST_MODE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(modeEnv); mode != "" {
		srv := newTestServer(mode)
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func schema(props string, required ...string) map[string]any {
	var m map[string]any
	req, _ := json.Marshal(required)
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{`+props+`},"required":`+string(req)+`}`), &m); err != nil {
		panic(err)
	}
	return m
}

// testTools are the tools every test server serves, as a server
// declares them; contract() states them as a contract.
func testTools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "echo", Description: "Echo a text back", InputSchema: schema(`"text":{"type":"string","description":"The text","minLength":1}`, "text")},
		{Name: "add", Description: "Add two integers", InputSchema: schema(`"a":{"type":"integer","description":"First"},"b":{"type":"integer","description":"Second","default":1}`, "a"),
			OutputSchema: schema(`"sum":{"type":"integer","description":"The sum"}`, "sum")},
		{Name: "wrong-result", Description: "Return a result its contract does not allow", InputSchema: schema(``),
			OutputSchema: schema(`"sum":{"type":"integer","description":"The sum"}`, "sum")},
		{Name: "slow", Description: "Report progress, then wait", InputSchema: schema(`"ms":{"type":"integer","description":"How long to wait"}`, "ms")},
		{Name: "crash", Description: "Exit in the middle of the call", InputSchema: schema(``)},
		{Name: "garbage", Description: "Write garbage to stdout", InputSchema: schema(``)},
		{Name: "big", Description: "Return a large text", InputSchema: schema(`"mb":{"type":"integer","description":"Megabytes"}`, "mb")},
		{Name: "flood", Description: "Flood stderr", InputSchema: schema(`"lines":{"type":"integer","description":"Lines"}`, "lines")},
		{Name: "env", Description: "List the environment", InputSchema: schema(``)},
		{Name: "stats", Description: "Count the calls and cancellations seen", InputSchema: schema(``)},
		{Name: "meta", Description: "Return the call's traceparent", InputSchema: schema(``)},
		{Name: "ask", Description: "Ask the client for a name, a completion and its roots", InputSchema: schema(``)},
		{Name: "roots", Description: "Ask the client for its roots over the session, with no params", InputSchema: schema(``)},
		{Name: "mutate", Description: "Change echo's description", InputSchema: schema(`"description":{"type":"string","description":"The new description"},"notify":{"type":"boolean","description":"Whether to send list_changed"}`, "description", "notify")},
	}
}

// newTestServer is a go-sdk server in one of several modes:
//
//	normal  the tools of testTools
//	many    100,000 tools, in pages of 1,000 (made as they are listed:
//	        go-sdk's AddTool takes a minute for as many in a race build)
//	hugedesc echo's description is 1 MB
//	collide GetEcho beside getEcho, which map to one contract key
func newTestServer(mode string) *mcp.Server {
	var calls, cancels atomic.Int64
	var mu sync.Mutex
	echoDesc := "Echo a text back"
	opts := &mcp.ServerOptions{HasTools: true}
	if mode == "ask-2025-11-25" {
		// The server speaks 2025-11-25 at most; by default, go-sdk's
		// speaks 2026-07-28.
		opts.SupportedProtocolVersions = []string{"2025-11-25"}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "1.0.0"}, opts)
	// The description of echo as listed is read at each tools/list, so
	// that mutate can change it with or without a notification.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if mode == "many" && method == "tools/list" {
				return manyTools(req.GetParams().(*mcp.ListToolsParams).Cursor), nil
			}
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				mu.Lock()
				d := echoDesc
				mu.Unlock()
				for i, t := range lr.Tools {
					if t.Name == "echo" {
						cp := *t
						cp.Description = d
						lr.Tools[i] = &cp
					}
				}
			}
			return res, err
		}
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	handlers := map[string]mcp.ToolHandler{
		"echo": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			json.Unmarshal(r.Params.Arguments, &a)
			return text(a.Text), nil
		},
		"add": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ A, B int }
			json.Unmarshal(r.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}, StructuredContent: map[string]any{"sum": a.A + a.B}}, nil
		},
		"wrong-result": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"sum": "not a number"}}, nil
		},
		"slow": func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Ms int }
			json.Unmarshal(r.Params.Arguments, &a)
			if tok := r.Params.GetProgressToken(); tok != nil {
				r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
			}
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
				return text("done"), nil
			case <-ctx.Done():
				cancels.Add(1)
				return nil, ctx.Err()
			}
		},
		"crash": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		},
		"garbage": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Stdout.WriteString("this is not JSON-RPC\n{{{{\n")
			time.Sleep(time.Second)
			return text("after garbage"), nil
		},
		"big": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Mb int }
			json.Unmarshal(r.Params.Arguments, &a)
			// Written straight to stdout, as the response to the call: a
			// result made and encoded by go-sdk takes seconds at 100 MB,
			// more in a race build.
			// toolc refuses the message before it reads as far as an id.
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":"big","result":{"content":[{"type":"text","text":"`)
			chunk := strings.Repeat("x", 1<<20)
			for range a.Mb {
				if _, err := os.Stdout.WriteString(chunk); err != nil {
					os.Exit(5) // toolc stopped reading
				}
			}
			os.Stdout.WriteString(`"}]}}` + "\n")
			select {}
		},
		"flood": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Lines int }
			json.Unmarshal(r.Params.Arguments, &a)
			line := strings.Repeat("e", 200) + "\n"
			for range a.Lines {
				os.Stderr.WriteString(line)
			}
			os.Stderr.WriteString(strings.Repeat("n", 1<<20)) // one line without an end
			return text("flooded"), nil
		},
		"env": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Join(os.Environ(), "\n")), nil
		},
		"stats": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprintf("calls=%d cancels=%d", calls.Load(), cancels.Load())), nil
		},
		"meta": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tp, _ := r.Params.Meta["traceparent"].(string)
			return text(tp), nil
		},
		// ask asks its three questions as go-sdk's servers do: as an
		// InputRequiredResult at 2026-07-28, which go-sdk turns into
		// elicitation/create, sampling/createMessage and roots/list over
		// the session of an older revision.
		"ask": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ir := r.Params.InputResponses
			if len(ir) < 3 {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					"name":  &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema(`"name":{"type":"string","description":"Your name"}`, "name")},
					"model": &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hi"}}}},
					"roots": &mcp.ListRootsParams{},
				}}, nil
			}
			var name, said, root string
			if e, ok := ir["name"].(*mcp.ElicitResult); ok && e.Action == "accept" {
				name = fmt.Sprint(e.Content["name"])
			}
			switch m := ir["model"].(type) {
			case *mcp.CreateMessageResult:
				if t, ok := m.Content.(*mcp.TextContent); ok {
					said = t.Text
				}
			case *mcp.CreateMessageWithToolsResult:
				if len(m.Content) > 0 {
					if t, ok := m.Content[0].(*mcp.TextContent); ok {
						said = t.Text
					}
				}
			}
			if l, ok := ir["roots"].(*mcp.ListRootsResult); ok && len(l.Roots) > 0 {
				root = l.Roots[0].URI
			}
			return text(fmt.Sprintf("name=%s model=%s root=%s", name, said, root)), nil
		},
		"roots": func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := r.Session.ListRoots(ctx, nil)
			if err != nil {
				return text("error: " + err.Error()), nil
			}
			if len(res.Roots) == 0 {
				return text("no roots"), nil
			}
			return text(res.Roots[0].URI), nil
		},
		"mutate": func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Description string
				Notify      bool
			}
			json.Unmarshal(r.Params.Arguments, &a)
			mu.Lock()
			echoDesc = a.Description
			mu.Unlock()
			if a.Notify {
				// Adding and removing a tool makes go-sdk send
				// notifications/tools/list_changed.
				srv.AddTool(&mcp.Tool{Name: "transient", InputSchema: schema(``)}, handlersNoop)
				srv.RemoveTools("transient")
			}
			return text("mutated"), nil
		},
	}
	for _, t := range testTools() {
		h := handlers[t.Name]
		srv.AddTool(t, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if t.Name != "stats" {
				calls.Add(1)
			}
			return h(ctx, r)
		})
	}
	switch mode {
	case "hugedesc":
		echoDesc = strings.Repeat("Echo. ", 1<<20/6)
	case "collide":
		srv.AddTool(&mcp.Tool{Name: "getEcho", Description: "One", InputSchema: schema(``)}, handlersNoop)
		srv.AddTool(&mcp.Tool{Name: "GetEcho", Description: "Two", InputSchema: schema(``)}, handlersNoop)
	case "extra":
		srv.AddTool(&mcp.Tool{Name: "undeclared", Description: "Not in the contract", InputSchema: schema(``)}, handlersNoop)
	}
	return srv
}

func handlersNoop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

// manyTools is the page of 100,000 tools that cursor asks for.
func manyTools(cursor string) *mcp.ListToolsResult {
	page := 0
	fmt.Sscan(cursor, &page)
	res := &mcp.ListToolsResult{}
	for i := page * 1000; i < (page+1)*1000; i++ {
		res.Tools = append(res.Tools, &mcp.Tool{Name: fmt.Sprintf("t%06d", i), Description: "One of many", InputSchema: schema(``)})
	}
	if page < 99 {
		res.NextCursor = fmt.Sprint(page + 1)
	}
	return res
}
