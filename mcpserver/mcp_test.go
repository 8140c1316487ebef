package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
)

// normalize encodes v and decodes it again, into the maps and slices that
// a client sees.
func normalize(t testing.TB, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantToolList checks that tools/list is exactly the catalog's MCP
// projection: names, titles, descriptions, schemas and annotations.
func wantToolList(t testing.TB, c *runtimetest.MCPClient, cat *catalog.Catalog) {
	t.Helper()
	want := normalize(t, cat.MCPTools()).([]any)
	for _, tool := range want {
		// go-sdk's ToolAnnotations hold readOnlyHint and idempotentHint as
		// plain bools, always sent: a hint the contract leaves unset
		// arrives as false, which is what MCP defines no hint to mean.
		if a, ok := tool.(map[string]any)["annotations"].(map[string]any); ok {
			for _, k := range []string{"readOnlyHint", "idempotentHint"} {
				if _, set := a[k]; !set {
					a[k] = false
				}
			}
		}
	}
	res, err := c.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := normalize(t, res.Tools).([]any)
	sortByName := func(ts []any) {
		slices.SortFunc(ts, func(a, b any) int {
			return strings.Compare(a.(map[string]any)["name"].(string), b.(map[string]any)["name"].(string))
		})
	}
	sortByName(want)
	sortByName(got)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("tools/list differs from the MCP projection:\n got %s\nwant %s", g, w)
	}
}

func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPOverHTTP: clients of every revision list and call tools on the
// same endpoint, a legacy one in a session, a 2026-07-28 one without.
func TestMCPOverHTTP(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	for _, rev := range runtimetest.Revisions {
		t.Run(rev, func(t *testing.T) { testMCPOverHTTP(t, ts, runtimetest.ConnectMCPAt(t, ts.URL, rev)) })
	}
}

func testMCPOverHTTP(t *testing.T, ts *httptest.Server, c *runtimetest.MCPClient) {
	ctx := context.Background()

	init := c.Session.InitializeResult()
	if init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
		t.Errorf("the server does not announce tools.listChanged: %+v", init.Capabilities)
	}
	if init.ServerInfo.Name != "toolc-test" || init.ServerInfo.Version != "0.0.1" {
		t.Errorf("server info = %+v", init.ServerInfo)
	}

	wantToolList(t, c, runtimetest.Setup(t).Catalog)

	t.Run("call", func(t *testing.T) {
		res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("echo: %s", mcpText(res))
		}
		got := normalize(t, res.StructuredContent)
		if want := map[string]any{"echo": "hi", "times": 1.0}; !reflect.DeepEqual(got, want) {
			t.Errorf("structuredContent = %v, want %v", got, want)
		}
		if !json.Valid([]byte(mcpText(res))) {
			t.Errorf("text copy = %q", mcpText(res))
		}

		// The in-process service, through the same server.
		res, err = c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "add"), Arguments: map[string]any{"a": 2, "b": 3}})
		if err != nil || res.IsError {
			t.Fatalf("add = %v, %v", res, err)
		}
		if got := normalize(t, res.StructuredContent); !reflect.DeepEqual(got, map[string]any{"sum": 5.0}) {
			t.Errorf("add = %v", got)
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		for _, args := range []any{
			map[string]any{"text": "hi", "times": 9},
			map[string]any{"text": 5},
			map[string]any{"times": 2},
			map[string]any{"text": "hi", "loud": true},
			nil,
		} {
			res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: args})
			if err != nil {
				t.Fatalf("echo %v: a JSON-RPC error, want an isError result: %v", args, err)
			}
			// The message names the tool by the MCP name the client called.
			if !res.IsError || !strings.Contains(mcpText(res), "invalid arguments for "+runtimetest.MCPName(t, "echo")+":") {
				t.Errorf("echo %v = %+v (%q), want isError naming %s", args, res, mcpText(res), runtimetest.MCPName(t, "echo"))
			}
		}
	})

	t.Run("tool errors", func(t *testing.T) {
		res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "panic")})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "deliberate panic") {
			t.Errorf("panic = %v (%q), %v", res, mcpText(res), err)
		}
		res, err = c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "bad_result")})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "breaks its contract") {
			t.Errorf("bad_result = %v (%q), %v", res, mcpText(res), err)
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		// MCP clients call tools by their MCP names; a function name that
		// differs from it is unknown too.
		for _, name := range []string{"no_such_tool", "echo"} {
			res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown tool %q = %v, %v; want a JSON-RPC invalid-params error", name, res, err)
			} else if !strings.Contains(rpcErr.Message, name) {
				t.Errorf("the error %q does not name the tool", rpcErr.Message)
			}
		}
	})

	t.Run("progress and logs", func(t *testing.T) {
		// A client asks for log messages with logging/setLevel for the
		// session, or, from MCP 2026-07-28 on, in each request's _meta.
		if c.Session.InitializeResult().ProtocolVersion < "2026-07-28" {
			if err := c.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
		}
		params := &mcp.CallToolParams{Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, Name: runtimetest.MCPName(t, "progress"), Arguments: map[string]any{"steps": 4}}
		params.SetProgressToken("tok-1")
		res, err := c.Session.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("progress = %v, %v", res, err)
		}
		wantProgress := []string{"tok-1 1/4 step 1", "tok-1 2/4 step 2", "tok-1 3/4 step 3", "tok-1 4/4 step 4"}
		wantLogs := []string{"info log 1", "info log 2", "info log 3", "info log 4"}
		testsync.WaitFor(t, 5*time.Second, "progress and logs", func() bool {
			p, l, _ := c.Snapshot()
			return len(p) >= len(wantProgress) && len(l) >= len(wantLogs)
		})
		p, l, _ := c.Snapshot()
		if !slices.Equal(p, wantProgress) {
			t.Errorf("progress notifications = %q, want %q", p, wantProgress)
		}
		if !slices.Equal(l, wantLogs) {
			t.Errorf("log messages = %q, want %q", l, wantLogs)
		}

		// Without a progress token, no progress; logs still come.
		res, err = c.Session.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, Name: runtimetest.MCPName(t, "progress"), Arguments: map[string]any{"steps": 1}})
		if err != nil || res.IsError {
			t.Fatalf("progress = %v, %v", res, err)
		}
		testsync.WaitFor(t, 5*time.Second, "the log line", func() bool { _, l, _ := c.Snapshot(); return len(l) == len(wantLogs)+1 })
		if p, _, _ := c.Snapshot(); len(p) != len(wantProgress) {
			t.Errorf("progress without a token: %q", p[len(wantProgress):])
		}
	})

	t.Run("timeout", func(t *testing.T) {
		rt := runtimetest.NewRuntime(t, runtime.Options{CallTimeout: 100 * time.Millisecond}, runtimetest.StartFaulty(t))
		c := runtimetest.ConnectMCP(t, runtimetest.ServeHTTP(t, rt, httpapi.Options{}).URL)
		res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "hang"), Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "did not finish within 100ms") {
			t.Errorf("hang = %v (%q), %v", res, mcpText(res), err)
		}
	})
}

// TestMCPFollowsSwaps: after a Swap, connected clients get
// notifications/tools/list_changed and the new list; calls follow it.
func TestMCPFollowsSwaps(t *testing.T) {
	for _, rev := range runtimetest.Revisions {
		t.Run(rev, func(t *testing.T) { testMCPFollowsSwaps(t, rev) })
	}
}

func testMCPFollowsSwaps(t *testing.T, rev string) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	c := runtimetest.ConnectMCPAt(t, ts.URL, rev)
	// A client of the other revision on the same endpoint, at the same time.
	other := runtimetest.ConnectMCPAt(t, ts.URL, runtimetest.Revisions[0])
	if rev == runtimetest.Revisions[0] {
		other = runtimetest.ConnectMCPAt(t, ts.URL, runtimetest.Revisions[1])
	}
	ctx := context.Background()
	wantToolList(t, c, runtimetest.Setup(t).Catalog)
	dispatchers := map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(runtimetest.InprocHandlers()...)}

	swap := func(cat *catalog.Catalog) {
		t.Helper()
		_, _, before := c.Snapshot()
		_, _, otherBefore := other.Snapshot()
		if _, err := rt.Swap(cat, dispatchers); err != nil {
			t.Fatal(err)
		}
		testsync.WaitFor(t, 5*time.Second, "notifications/tools/list_changed", func() bool {
			_, _, n := c.Snapshot()
			_, _, m := other.Snapshot()
			return n > before && m > otherBefore
		})
		wantToolList(t, c, cat)
		wantToolList(t, other, cat)
	}

	// Fewer tools.
	sub, err := runtimetest.Setup(t).Catalog.Select("echo", "add", "progress")
	if err != nil {
		t.Fatal(err)
	}
	swap(sub)
	res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "sleep"), Arguments: map[string]any{"ms": 1}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Errorf("sleep after the Swap that removed it = %v, %v; want a JSON-RPC error", res, err)
	}

	// A changed tool: a new description, and a changed request.
	changed := runtimetest.CloneCatalog(t, runtimetest.Setup(t).Catalog)
	for _, tl := range runtimetest.Service(changed, "faulty").Tools {
		if tl.Name == "echo" {
			tl.Description = "Repeat a text, now with a new description"
			tl.Request.Field("times").Maximum = ptr(2.0)
		}
	}
	changed.Seal()
	swap(changed)
	res, err = c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: map[string]any{"text": "x", "times": 3}})
	if err != nil || !res.IsError || !strings.Contains(mcpText(res), "at most 2") {
		t.Errorf("echo times 3 after the bound became 2 = %v (%q), %v", res, mcpText(res), err)
	}
	res, err = c.Session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "sleep"), Arguments: map[string]any{"ms": 1}})
	if err != nil || res.IsError {
		t.Errorf("sleep after the Swap that brought it back = %v, %v", res, err)
	}

	// The same catalog again changes nothing, and sends nothing.
	_, _, before := c.Snapshot()
	if _, err := rt.Swap(changed, dispatchers); err != nil {
		t.Fatal(err)
	}
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`)) // give a notification time to arrive
	time.Sleep(100 * time.Millisecond)
	if _, _, n := c.Snapshot(); n != before {
		t.Errorf("a Swap to the same catalog sent %d list_changed notifications", n-before)
	}

	// A client that connects after the swaps sees the current list.
	wantToolList(t, runtimetest.ConnectMCPAt(t, ts.URL, rev), changed)
}

// TestConcurrentSwapsMCPList: however swaps interleave, the MCP server
// ends up listing the tools of the snapshot that is current.
func TestConcurrentSwapsMCPList(t *testing.T) {
	runtimetest.Setup(t)
	rt := runtime.New(runtime.Options{})
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	c := runtimetest.ConnectMCP(t, ts.URL)
	local := runtime.Local(runtimetest.InprocHandlers()...)
	a, err := runtimetest.Setup(t).Catalog.Select("add")
	if err != nil {
		t.Fatal(err)
	}
	b := &catalog.Catalog{Services: []*catalog.Service{}}
	for round := range 20 {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cat := a
				if (i+round)%2 == 1 {
					cat = b
				}
				if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"inproc": local}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		res, err := c.Session.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		var want []string
		for _, info := range rt.Snapshot().Tools() {
			want = append(want, info.MCPName)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: tools/list = %q, but the snapshot serves %q", round, got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestMCPStateless: without sessions, for replicas behind a load
// balancer, clients still list and call tools.
func TestMCPStateless(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{MCP: mcpserver.HTTPOptions{Stateless: true}})
	c := runtimetest.ConnectMCP(t, ts.URL)
	wantToolList(t, c, runtimetest.Setup(t).Catalog)
	for range 3 {
		res, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Fatalf("echo = %v, %v", res, err)
		}
	}
	res, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: map[string]any{"text": ""}})
	if err != nil || !res.IsError {
		t.Errorf("echo with an empty text = %v, %v; want isError", res, err)
	}
}
