package runtime_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/runtime"
)

// rpcAnswer is a JSON-RPC response as it arrives, in JSON or as the last
// data line of an SSE stream.
type rpcAnswer struct {
	status int
	header http.Header
	ID     json.RawMessage
	Result map[string]any
	Error  *struct {
		Code    int
		Message string
		Data    map[string]any
	}
}

// meta2026 is the _meta every 2026-07-28 request carries.
func meta2026(version string) map[string]any {
	return map[string]any{
		mcp.MetaKeyProtocolVersion:                   version,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

// rpc POSTs one JSON-RPC request to /mcp with the headers, and decodes the
// answer.
func rpc(t testing.TB, url, method string, params map[string]any, header map[string]string) rpcAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	h := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Method": method}
	if name, ok := params["name"].(string); ok {
		h["Mcp-Name"] = name
	}
	if uri, ok := params["uri"].(string); ok && method == "resources/read" {
		h["Mcp-Name"] = uri
	}
	for k, v := range header {
		h[k] = v
	}
	r := do(t, "POST", url+"/mcp", string(body), h)
	out := rpcAnswer{status: r.status, header: r.header}
	data := r.body
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		data = ""
		for _, line := range strings.Split(r.body, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
	}
	if err := json.Unmarshal([]byte(data), &out); err != nil {
		t.Fatalf("%s %s: status %d, body %q: %v", method, header, r.status, r.body, err)
	}
	return out
}

// TestMCPEndpointRevisions: one URL routes each request by its revision,
// and answers a revision it does not speak, or a 2026-07-28 request
// without its header, with the spec's errors.
func TestMCPEndpointRevisions(t *testing.T) {
	rt := newRuntime(t, runtime.Options{}, startFaulty(t))
	srv := runtime.NewMCPServer(rt, runtime.MCPOptions{Name: "toolc-test", Version: "0.0.1", ListTTL: 90 * time.Second})
	for _, stateless := range []bool{false, true} {
		ts := httptest.NewServer(runtime.NewHTTPHandler(rt, srv, runtime.HTTPOptions{Stateless: stateless}))
		t.Cleanup(ts.Close)
		v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28"}

		// A legacy initialize gets a session, unless there are none.
		init := rpc(t, ts.URL, "initialize", map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
		}, nil)
		if init.Error != nil || init.Result["protocolVersion"] != "2025-06-18" {
			t.Errorf("stateless=%v: initialize at 2025-06-18 = %+v %v", stateless, init.Result, init.Error)
		}
		if id := init.header.Get("Mcp-Session-Id"); (id != "") == stateless {
			t.Errorf("stateless=%v: initialize answered with session %q", stateless, id)
		}

		// A 2026-07-28 request is answered on its own, without a session.
		list := rpc(t, ts.URL, "tools/list", map[string]any{"_meta": meta2026("2026-07-28")}, v2026)
		if list.status != 200 || list.Error != nil || len(list.Result["tools"].([]any)) == 0 {
			t.Fatalf("stateless=%v: 2026-07-28 tools/list = %d %+v %v", stateless, list.status, list.Result, list.Error)
		}
		if id := list.header.Get("Mcp-Session-Id"); id != "" {
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
			{"future", map[string]any{"_meta": meta2026("2099-01-01")}, map[string]string{"MCP-Protocol-Version": "2099-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
			{"past", map[string]any{}, map[string]string{"MCP-Protocol-Version": "2023-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
			{"garbage", map[string]any{}, map[string]string{"MCP-Protocol-Version": "v999.0.0"}, 400, mcp.CodeUnsupportedProtocolVersion},
			// A 2026-07-28 request without its header.
			{"no header", map[string]any{"_meta": meta2026("2026-07-28")}, nil, 400, mcp.CodeHeaderMismatch},
			// Header and _meta disagree.
			{"mismatch", map[string]any{"_meta": meta2026("2025-11-25")}, v2026, 400, mcp.CodeHeaderMismatch},
		} {
			a := rpc(t, ts.URL, "tools/list", tc.params, tc.header)
			if a.status != tc.status || a.Error == nil || a.Error.Code != tc.code {
				t.Errorf("stateless=%v %s: %d %+v, want %d and code %d", stateless, tc.name, a.status, a.Error, tc.status, tc.code)
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
	rt := newRuntime(t, runtime.Options{}, startFaulty(t))
	srv := runtime.NewMCPServer(rt, runtime.MCPOptions{Name: "toolc-test", Version: "0.0.1", ListTTL: 90 * time.Second})
	ts := httptest.NewServer(runtime.NewHTTPHandler(rt, srv, runtime.HTTPOptions{}))
	t.Cleanup(ts.Close)
	v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
	want := map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}}

	disc := rpc(t, ts.URL, "server/discover", map[string]any{"_meta": meta2026("2026-07-28")}, v2026)
	if disc.Error != nil || !reflect.DeepEqual(disc.Result["capabilities"], want) {
		t.Errorf("server/discover capabilities = %v %v, want %v", disc.Result["capabilities"], disc.Error, want)
	}
	init := rpc(t, ts.URL, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
	}, nil)
	if !reflect.DeepEqual(init.Result["capabilities"], want) {
		t.Errorf("initialize capabilities = %v, want %v", init.Result["capabilities"], want)
	}
	session := map[string]string{"Mcp-Session-Id": init.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}

	for _, method := range []string{"prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read", "completion/complete", "no/such/method"} {
		params := map[string]any{"name": "x", "uri": "test://x", "_meta": meta2026("2026-07-28")}
		if a := rpc(t, ts.URL, method, params, v2026); a.status != 404 || a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("2026-07-28 %s = %d %+v, want 404 and -32601", method, a.status, a.Error)
		}
		if method == "no/such/method" {
			// go-sdk answers a legacy session's unknown method with a
			// plain-text 400 before toolc sees it.
			continue
		}
		delete(params, "_meta")
		if a := rpc(t, ts.URL, method, params, session); a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("2025-11-25 %s = %d %+v %v, want -32601", method, a.status, a.Error, a.Result)
		}
	}

	for _, res := range []rpcAnswer{disc, rpc(t, ts.URL, "tools/list", map[string]any{"_meta": meta2026("2026-07-28")}, v2026)} {
		if res.Result["ttlMs"] != 90000.0 || res.Result["cacheScope"] != "public" {
			t.Errorf("caching hints ttlMs=%v cacheScope=%v, want 90000 and public", res.Result["ttlMs"], res.Result["cacheScope"])
		}
	}
}
