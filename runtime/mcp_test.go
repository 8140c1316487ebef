package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

	"github.com/toolc/toolc/internal/testsync"
)

// mcpClient is a go-sdk client session with what the server sent it.
type mcpClient struct {
	session *mcp.ClientSession

	mu          sync.Mutex
	progress    []string
	logs        []string
	listChanged int
}

func (c *mcpClient) snapshot() (progress, logs []string, listChanged int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.progress), slices.Clone(c.logs), c.listChanged
}

func (c *mcpClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := req.Params
			c.mu.Lock()
			c.progress = append(c.progress, fmt.Sprintf("%v %g/%g %s", p.ProgressToken, p.Progress, p.Total, p.Message))
			c.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			p := req.Params
			c.mu.Lock()
			c.logs = append(c.logs, fmt.Sprintf("%s %v", p.Level, p.Data))
			c.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			c.listChanged++
			c.mu.Unlock()
		},
	}
}

// connectMCP connects a go-sdk client to the test server's /mcp, at the
// newest revision it speaks.
func connectMCP(t testing.TB, url string) *mcpClient {
	t.Helper()
	return connectMCPAt(t, url, "")
}

// revisions are the MCP revisions a client may speak to the one endpoint:
// 2026-07-28 without sessions, 2025-11-25 with them.
var revisions = []string{"2026-07-28", "2025-11-25"}

// connectMCPAt connects a go-sdk client that asks for the revision ("":
// the newest go-sdk speaks), and checks that the server serves it in the
// revision's way: with a session for a legacy revision, without one for
// 2026-07-28.
func connectMCPAt(t testing.TB, url, revision string) *mcpClient {
	t.Helper()
	c := &mcpClient{}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, c.options())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wire := &wireLog{next: http.DefaultTransport}
	transport := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: wire}}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	c.session = session
	if revision != "" {
		if _, err := session.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		versions, sessions := wire.seen()
		if !slices.Contains(versions, revision) {
			t.Errorf("a client of %s sent MCP-Protocol-Version %q", revision, versions)
		}
		if legacy := revision < "2026-07-28"; legacy != (len(sessions) > 0) {
			t.Errorf("a client of %s was given sessions %q", revision, sessions)
		}
	}
	return c
}

// wireLog records the MCP-Protocol-Version headers a client sends and the
// Mcp-Session-Id headers it is answered with.
type wireLog struct {
	next http.RoundTripper

	mu       sync.Mutex
	versions []string
	sessions []string
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if v := req.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(w.versions, v) {
		w.versions = append(w.versions, v)
	}
	if err == nil {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" && !slices.Contains(w.sessions, id) {
			w.sessions = append(w.sessions, id)
		}
	}
	return resp, err
}

func (w *wireLog) seen() (versions, sessions []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.versions), slices.Clone(w.sessions)
}

// serveHTTP serves rt over HTTP, MCP included, for the test's duration.
func serveHTTP(t testing.TB, rt *runtime.Runtime, opts httpapi.Options) *httptest.Server {
	t.Helper()
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"})
	ts := httptest.NewServer(httpapi.NewHandler(rt, srv, opts))
	t.Cleanup(ts.Close)
	return ts
}

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
func wantToolList(t testing.TB, c *mcpClient, cat *catalog.Catalog) {
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
	res, err := c.session.ListTools(context.Background(), nil)
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

// mcpName is the MCP name of a tool in the test catalog.
func mcpName(t testing.TB, tool string) string {
	t.Helper()
	for svc, tl := range fixture.cat.Tools() {
		if tl.Name == tool {
			return tl.ExposedMCPName(svc.Name)
		}
	}
	t.Fatalf("no tool %s", tool)
	return ""
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
	rt := newRuntime(t, runtime.Options{}, startFaulty(t))
	ts := serveHTTP(t, rt, httpapi.Options{})
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) { testMCPOverHTTP(t, ts, connectMCPAt(t, ts.URL, rev)) })
	}
}

func testMCPOverHTTP(t *testing.T, ts *httptest.Server, c *mcpClient) {
	ctx := context.Background()

	init := c.session.InitializeResult()
	if init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
		t.Errorf("the server does not announce tools.listChanged: %+v", init.Capabilities)
	}
	if init.ServerInfo.Name != "toolc-test" || init.ServerInfo.Version != "0.0.1" {
		t.Errorf("server info = %+v", init.ServerInfo)
	}

	wantToolList(t, c, fixture.cat)

	t.Run("call", func(t *testing.T) {
		res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "echo"), Arguments: map[string]any{"text": "hi"}})
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
		res, err = c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "add"), Arguments: map[string]any{"a": 2, "b": 3}})
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
			res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "echo"), Arguments: args})
			if err != nil {
				t.Fatalf("echo %v: a JSON-RPC error, want an isError result: %v", args, err)
			}
			// The message names the tool by the MCP name the client called.
			if !res.IsError || !strings.Contains(mcpText(res), "invalid arguments for "+mcpName(t, "echo")+":") {
				t.Errorf("echo %v = %+v (%q), want isError naming %s", args, res, mcpText(res), mcpName(t, "echo"))
			}
		}
	})

	t.Run("tool errors", func(t *testing.T) {
		res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "panic")})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "deliberate panic") {
			t.Errorf("panic = %v (%q), %v", res, mcpText(res), err)
		}
		res, err = c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "bad_result")})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "breaks its contract") {
			t.Errorf("bad_result = %v (%q), %v", res, mcpText(res), err)
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		// MCP clients call tools by their MCP names; a function name that
		// differs from it is unknown too.
		for _, name := range []string{"no_such_tool", "echo"} {
			res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
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
		if c.session.InitializeResult().ProtocolVersion < "2026-07-28" {
			if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
		}
		params := &mcp.CallToolParams{Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, Name: mcpName(t, "progress"), Arguments: map[string]any{"steps": 4}}
		params.SetProgressToken("tok-1")
		res, err := c.session.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("progress = %v, %v", res, err)
		}
		wantProgress := []string{"tok-1 1/4 step 1", "tok-1 2/4 step 2", "tok-1 3/4 step 3", "tok-1 4/4 step 4"}
		wantLogs := []string{"info log 1", "info log 2", "info log 3", "info log 4"}
		testsync.WaitFor(t, 5*time.Second, "progress and logs", func() bool {
			p, l, _ := c.snapshot()
			return len(p) >= len(wantProgress) && len(l) >= len(wantLogs)
		})
		p, l, _ := c.snapshot()
		if !slices.Equal(p, wantProgress) {
			t.Errorf("progress notifications = %q, want %q", p, wantProgress)
		}
		if !slices.Equal(l, wantLogs) {
			t.Errorf("log messages = %q, want %q", l, wantLogs)
		}

		// Without a progress token, no progress; logs still come.
		res, err = c.session.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, Name: mcpName(t, "progress"), Arguments: map[string]any{"steps": 1}})
		if err != nil || res.IsError {
			t.Fatalf("progress = %v, %v", res, err)
		}
		testsync.WaitFor(t, 5*time.Second, "the log line", func() bool { _, l, _ := c.snapshot(); return len(l) == len(wantLogs)+1 })
		if p, _, _ := c.snapshot(); len(p) != len(wantProgress) {
			t.Errorf("progress without a token: %q", p[len(wantProgress):])
		}
	})

	t.Run("timeout", func(t *testing.T) {
		rt := newRuntime(t, runtime.Options{CallTimeout: 100 * time.Millisecond}, startFaulty(t))
		c := connectMCP(t, serveHTTP(t, rt, httpapi.Options{}).URL)
		res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "hang"), Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(mcpText(res), "did not finish within 100ms") {
			t.Errorf("hang = %v (%q), %v", res, mcpText(res), err)
		}
	})
}

// TestMCPFollowsSwaps: after a Swap, connected clients get
// notifications/tools/list_changed and the new list; calls follow it.
func TestMCPFollowsSwaps(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) { testMCPFollowsSwaps(t, rev) })
	}
}

func testMCPFollowsSwaps(t *testing.T, rev string) {
	p := startFaulty(t)
	rt := newRuntime(t, runtime.Options{}, p)
	ts := serveHTTP(t, rt, httpapi.Options{})
	c := connectMCPAt(t, ts.URL, rev)
	// A client of the other revision on the same endpoint, at the same time.
	other := connectMCPAt(t, ts.URL, revisions[0])
	if rev == revisions[0] {
		other = connectMCPAt(t, ts.URL, revisions[1])
	}
	ctx := context.Background()
	wantToolList(t, c, fixture.cat)
	dispatchers := map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(inprocHandlers()...)}

	swap := func(cat *catalog.Catalog) {
		t.Helper()
		_, _, before := c.snapshot()
		_, _, otherBefore := other.snapshot()
		if _, err := rt.Swap(cat, dispatchers); err != nil {
			t.Fatal(err)
		}
		testsync.WaitFor(t, 5*time.Second, "notifications/tools/list_changed", func() bool {
			_, _, n := c.snapshot()
			_, _, m := other.snapshot()
			return n > before && m > otherBefore
		})
		wantToolList(t, c, cat)
		wantToolList(t, other, cat)
	}

	// Fewer tools.
	sub, err := fixture.cat.Select("echo", "add", "progress")
	if err != nil {
		t.Fatal(err)
	}
	swap(sub)
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "sleep"), Arguments: map[string]any{"ms": 1}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Errorf("sleep after the Swap that removed it = %v, %v; want a JSON-RPC error", res, err)
	}

	// A changed tool: a new description, and a changed request.
	changed := cloneCatalog(t, fixture.cat)
	for _, tl := range service(changed, "faulty").Tools {
		if tl.Name == "echo" {
			tl.Description = "Repeat a text, now with a new description"
			tl.Request.Field("times").Maximum = ptr(2.0)
		}
	}
	changed.Seal()
	swap(changed)
	res, err = c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "echo"), Arguments: map[string]any{"text": "x", "times": 3}})
	if err != nil || !res.IsError || !strings.Contains(mcpText(res), "at most 2") {
		t.Errorf("echo times 3 after the bound became 2 = %v (%q), %v", res, mcpText(res), err)
	}
	res, err = c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(t, "sleep"), Arguments: map[string]any{"ms": 1}})
	if err != nil || res.IsError {
		t.Errorf("sleep after the Swap that brought it back = %v, %v", res, err)
	}

	// The same catalog again changes nothing, and sends nothing.
	_, _, before := c.snapshot()
	if _, err := rt.Swap(changed, dispatchers); err != nil {
		t.Fatal(err)
	}
	wantOK(t, call(t, rt, "echo", `{"text":"x"}`)) // give a notification time to arrive
	time.Sleep(100 * time.Millisecond)
	if _, _, n := c.snapshot(); n != before {
		t.Errorf("a Swap to the same catalog sent %d list_changed notifications", n-before)
	}

	// A client that connects after the swaps sees the current list.
	wantToolList(t, connectMCPAt(t, ts.URL, rev), changed)
}

// TestConcurrentSwapsMCPList: however swaps interleave, the MCP server
// ends up listing the tools of the snapshot that is current.
func TestConcurrentSwapsMCPList(t *testing.T) {
	setup(t)
	rt := runtime.New(runtime.Options{})
	ts := serveHTTP(t, rt, httpapi.Options{})
	c := connectMCP(t, ts.URL)
	local := runtime.Local(inprocHandlers()...)
	a, err := fixture.cat.Select("add")
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
		res, err := c.session.ListTools(context.Background(), nil)
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
	rt := newRuntime(t, runtime.Options{}, startFaulty(t))
	ts := serveHTTP(t, rt, httpapi.Options{MCP: mcpserver.HTTPOptions{Stateless: true}})
	c := connectMCP(t, ts.URL)
	wantToolList(t, c, fixture.cat)
	for range 3 {
		res, err := c.session.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpName(t, "echo"), Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Fatalf("echo = %v, %v", res, err)
		}
	}
	res, err := c.session.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpName(t, "echo"), Arguments: map[string]any{"text": ""}})
	if err != nil || !res.IsError {
		t.Errorf("echo with an empty text = %v, %v; want isError", res, err)
	}
}
