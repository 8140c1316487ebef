package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// TestMCPEndpointRevisions: one URL routes each request by its revision,
// and answers a revision it does not speak, or a 2026-07-28 request
// without its header, with the spec's errors.
func TestMCPEndpointRevisions(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1", ListTTL: 90 * time.Second})
	for _, stateless := range []bool{false, true} {
		ts := httptest.NewServer(httpapi.NewHandler(rt, srv, httpapi.Options{MCP: mcpserver.HTTPOptions{Stateless: stateless}}))
		t.Cleanup(ts.Close)
		v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28"}

		// A legacy initialize gets a session, unless there are none.
		init := runtimetest.RPC(t, ts.URL, "initialize", map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
		}, nil)
		if init.Error != nil || init.Result["protocolVersion"] != "2025-06-18" {
			t.Errorf("stateless=%v: initialize at 2025-06-18 = %+v %v", stateless, init.Result, init.Error)
		}
		if id := init.Header.Get("Mcp-Session-Id"); (id != "") == stateless {
			t.Errorf("stateless=%v: initialize answered with session %q", stateless, id)
		}

		// A 2026-07-28 request is answered on its own, without a session.
		list := runtimetest.RPC(t, ts.URL, "tools/list", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28")}, v2026)
		if list.Status != 200 || list.Error != nil || len(list.Result["tools"].([]any)) == 0 {
			t.Fatalf("stateless=%v: 2026-07-28 tools/list = %d %+v %v", stateless, list.Status, list.Result, list.Error)
		}
		if id := list.Header.Get("Mcp-Session-Id"); id != "" {
			t.Errorf("stateless=%v: a 2026-07-28 request was given session %q", stateless, id)
		}
		if string(list.ID) != "7" {
			t.Errorf("id %s", list.ID)
		}

		for _, tc := range []struct {
			name   string
			params map[string]any
			header map[string]string
			status int
			code   int
		}{
			// A revision nobody speaks, named in the header.
			{"future", map[string]any{"_meta": runtimetest.Meta2026("2099-01-01")}, map[string]string{"MCP-Protocol-Version": "2099-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
			{"past", map[string]any{}, map[string]string{"MCP-Protocol-Version": "2023-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
			{"garbage", map[string]any{}, map[string]string{"MCP-Protocol-Version": "v999.0.0"}, 400, mcp.CodeUnsupportedProtocolVersion},
			// A 2026-07-28 request without its header.
			{"no header", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28")}, nil, 400, mcp.CodeHeaderMismatch},
			// Header and _meta disagree.
			{"mismatch", map[string]any{"_meta": runtimetest.Meta2026("2025-11-25")}, v2026, 400, mcp.CodeHeaderMismatch},
		} {
			a := runtimetest.RPC(t, ts.URL, "tools/list", tc.params, tc.header)
			if a.Status != tc.status || a.Error == nil || a.Error.Code != tc.code {
				t.Errorf("stateless=%v %s: %d %+v, want %d and code %d", stateless, tc.name, a.Status, a.Error, tc.status, tc.code)
				continue
			}
			if string(a.ID) != "7" {
				t.Errorf("stateless=%v %s: error id %s, want 7", stateless, tc.name, a.ID)
			}
			if tc.code == mcp.CodeUnsupportedProtocolVersion {
				want := map[string]any{"requested": tc.header["MCP-Protocol-Version"], "supported": normalize(t, mcp.SupportedProtocolVersions())}
				if !reflect.DeepEqual(a.Error.Data, want) {
					t.Errorf("stateless=%v %s: error data %v, want %v", stateless, tc.name, a.Error.Data, want)
				}
			}
		}
	}
}

// TestMCPDeclaresWhatItServes: server/discover and initialize declare tools
// and logging, and nothing else; the methods of the features toolc does
// not serve are "method not found", 404 for a 2026-07-28 request; list
// results carry the caching hints the server was given.
func TestMCPDeclaresWhatItServes(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1", ListTTL: 90 * time.Second})
	ts := httptest.NewServer(httpapi.NewHandler(rt, srv, httpapi.Options{}))
	t.Cleanup(ts.Close)
	v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
	want := map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}}

	disc := runtimetest.RPC(t, ts.URL, "server/discover", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28")}, v2026)
	if disc.Error != nil || !reflect.DeepEqual(disc.Result["capabilities"], want) {
		t.Errorf("server/discover capabilities = %v %v, want %v", disc.Result["capabilities"], disc.Error, want)
	}
	init := runtimetest.RPC(t, ts.URL, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
	}, nil)
	if !reflect.DeepEqual(init.Result["capabilities"], want) {
		t.Errorf("initialize capabilities = %v, want %v", init.Result["capabilities"], want)
	}
	session := map[string]string{"Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}

	for _, method := range []string{"prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read", "completion/complete", "no/such/method", "tasks/get"} {
		params := map[string]any{"name": "x", "uri": "test://x", "_meta": runtimetest.Meta2026("2026-07-28")}
		if a := runtimetest.RPC(t, ts.URL, method, params, v2026); a.Status != 404 || a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("2026-07-28 %s = %d %+v, want 404 and -32601", method, a.Status, a.Error)
		}
		delete(params, "_meta")
		if a := runtimetest.RPC(t, ts.URL, method, params, session); a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("2025-11-25 %s = %d %+v %v, want -32601", method, a.Status, a.Error, a.Result)
		}
	}

	// The session outlives the methods it was refused.
	if a := runtimetest.RPC(t, ts.URL, "tools/list", map[string]any{}, session); a.Error != nil || a.Result["tools"] == nil {
		t.Errorf("2025-11-25 tools/list after the refused methods = %d %+v", a.Status, a.Error)
	}

	for _, res := range []runtimetest.RPCAnswer{disc, runtimetest.RPC(t, ts.URL, "tools/list", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28")}, v2026)} {
		if res.Result["ttlMs"] != 90000.0 || res.Result["cacheScope"] != "public" {
			t.Errorf("caching hints ttlMs=%v cacheScope=%v, want 90000 and public", res.Result["ttlMs"], res.Result["cacheScope"])
		}
	}
}

// TestMCPListenStream: a 2026-07-28 client's subscriptions/listen stream
// opens with notifications/subscriptions/acknowledged, and each Swap that
// changes the tools sends notifications/tools/list_changed on it, both
// tagged with the listen request's id as the subscription id.
func TestMCPListenStream(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": map[string]any{
		"_meta":         runtimetest.Meta2026("2026-07-28"),
		"notifications": map[string]any{"toolsListChanged": true, "promptsListChanged": true},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("subscriptions/listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	frames := make(chan map[string]any, 8)
	go func() {
		defer close(frames)
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if d, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var f map[string]any
				json.Unmarshal([]byte(d), &f)
				frames <- f
			}
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("the listen stream ended before %s", what)
			}
			return f
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s on the listen stream within 5s", what)
		}
		return nil
	}
	subscription := func(f map[string]any) any {
		params, _ := f["params"].(map[string]any)
		meta, _ := params["_meta"].(map[string]any)
		return meta["io.modelcontextprotocol/subscriptionId"]
	}

	ack := next("the acknowledgement")
	if ack["method"] != "notifications/subscriptions/acknowledged" || subscription(ack) != "listen-1" {
		t.Fatalf("first frame %v, want notifications/subscriptions/acknowledged for listen-1", ack)
	}
	// toolc has no prompts: only the tools subscription is agreed.
	if got := ack["params"].(map[string]any)["notifications"]; !reflect.DeepEqual(got, map[string]any{"toolsListChanged": true}) {
		t.Errorf("acknowledged %v, want toolsListChanged only", got)
	}

	sub, err := runtimetest.Setup(t).Catalog.Select("echo")
	if err != nil {
		t.Fatal(err)
	}
	for i, cat := range []*catalog.Catalog{sub, runtimetest.Setup(t).Catalog} {
		if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(runtimetest.InprocHandlers()...)}); err != nil {
			t.Fatal(err)
		}
		f := next("notifications/tools/list_changed")
		if f["method"] != "notifications/tools/list_changed" || subscription(f) != "listen-1" {
			t.Errorf("after swap %d: %v, want notifications/tools/list_changed for listen-1", i, f)
		}
	}
}

// TestMCPParamHeaders: a 2026-07-28 tools/call of a tool whose fields have
// an mcp.header carries each argument in its Mcp-Param-* header too, and a
// header that is missing, does not match, is not valid base64, or carries
// characters a header may not is a 400 with HeaderMismatch; the handler
// never runs.
func TestMCPParamHeaders(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	name := runtimetest.MCPName(t, "route")

	// The projection declares the headers.
	list := runtimetest.RPC(t, ts.URL, "tools/list", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28")}, map[string]string{"MCP-Protocol-Version": "2026-07-28"})
	var headers map[string]any
	for _, tl := range list.Result["tools"].([]any) {
		if tl := tl.(map[string]any); tl["name"] == name {
			headers = map[string]any{}
			for k, p := range tl["inputSchema"].(map[string]any)["properties"].(map[string]any) {
				headers[k] = p.(map[string]any)["x-mcp-header"]
			}
		}
	}
	if want := map[string]any{"region": "Region", "tenant": "Tenant", "dry_run": "Dry-Run"}; !reflect.DeepEqual(headers, want) {
		t.Errorf("x-mcp-header of %s's properties = %v, want %v", name, headers, want)
	}

	for _, tc := range []struct {
		name   string
		args   map[string]any
		header map[string]string
		ok     bool
	}{
		{"plain", map[string]any{"region": "us-west1"}, map[string]string{"Mcp-Param-Region": "us-west1"}, true},
		{"all three", map[string]any{"region": "eu", "tenant": 42, "dry_run": true},
			map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Tenant": "42", "Mcp-Param-Dry-Run": "true"}, true},
		{"integer compared as a number", map[string]any{"region": "eu", "tenant": 42}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Tenant": "42.0"}, true},
		{"base64", map[string]any{"region": "Hello, 世界"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, true},
		{"case of the header name", map[string]any{"region": "eu"}, map[string]string{"mcp-param-region": "eu"}, true},
		{"an undeclared header is left alone", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Other": "x"}, true},

		{"missing", map[string]any{"region": "eu"}, nil, false},
		{"mismatch", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "us"}, false},
		{"mismatch of an integer", map[string]any{"region": "eu", "tenant": 42}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Tenant": "43"}, false},
		{"mismatch of a boolean", map[string]any{"region": "eu", "dry_run": true}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "false"}, false},
		{"header without argument", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Tenant": "1"}, false},
		{"bad base64 padding", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}, false},
		{"bad base64 characters", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, false},
		{"raw non-ASCII", map[string]any{"region": "Zürich"}, map[string]string{"Mcp-Param-Region": "Zürich"}, false},
	} {
		header := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
		for k, v := range tc.header {
			header[k] = v
		}
		a := runtimetest.RPC(t, ts.URL, "tools/call", map[string]any{"name": name, "arguments": tc.args, "_meta": runtimetest.Meta2026("2026-07-28")}, header)
		switch {
		case tc.ok && (a.Status != 200 || a.Error != nil || a.Result["isError"] == true):
			t.Errorf("%s: %d %+v %v, want a result", tc.name, a.Status, a.Error, a.Result)
		case !tc.ok && (a.Status != 400 || a.Error == nil || a.Error.Code != mcp.CodeHeaderMismatch):
			t.Errorf("%s: %d %+v %v, want 400 and HeaderMismatch (-32020)", tc.name, a.Status, a.Error, a.Result)
		case !tc.ok && string(a.ID) != "7":
			t.Errorf("%s: error id %s", tc.name, a.ID)
		}
	}
}

// TestMCPEndpointBadBodies: the bodies the endpoint reads to route a
// request without a version header, when they are too large or no JSON,
// get an error status, not a hang or a panic, and the server goes on.
func TestMCPEndpointBadBodies(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	h := map[string]string{"Accept": "application/json, text/event-stream"}
	huge := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("x", mcp.DefaultMaxRequestBodyBytes) + `"}}`
	if r := runtimetest.Do(t, "POST", ts.URL+"/mcp", huge, h); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the bound: %d %.200s", r.Status, r.Body)
	}
	for _, body := range []string{`{"jsonrpc":`, `[]`, `"x"`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":7}}`} {
		// A 4xx, or a JSON-RPC error: go-sdk answers a legacy request
		// outside a session with one.
		if r := runtimetest.Do(t, "POST", ts.URL+"/mcp", body, h); (r.Status < 400 || r.Status >= 500) && !strings.Contains(r.Body, `"error":`) {
			t.Errorf("body %s: %d %.200s, want a 4xx or a JSON-RPC error", body, r.Status, r.Body)
		}
	}
	list := runtimetest.RPC(t, ts.URL, "tools/list", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28")}, map[string]string{"MCP-Protocol-Version": "2026-07-28"})
	if list.Error != nil {
		t.Errorf("after the bad bodies, tools/list = %+v", list.Error)
	}
}
