package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/runtime"
)

// TestMCPDuplicateKeys: a JSON-RPC message that gives a key twice is
// refused before go-sdk reads it, on the 2026-07-28 path and in a legacy
// session: go-sdk would take the last "name", while a gateway in front
// that allowlists tools may have read the first.
func TestMCPDuplicateKeys(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	add := runtimetest.MCPName(t, "add")
	meta, _ := json.Marshal(runtimetest.Meta2026("2026-07-28"))
	modern := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": add}

	// A legacy session.
	legacy := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	init := runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, legacy)
	if init.Status != 200 || init.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", init.Status, init.Body)
	}
	legacy["Mcp-Session-Id"] = init.Header.Get("Mcp-Session-Id")
	legacy["MCP-Protocol-Version"] = "2025-06-18"
	runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy)

	for _, tc := range []struct {
		name, params string
		code         int
		path         string
	}{
		{"name twice", `{"name":"nope","name":"` + add + `","arguments":{"a":1,"b":2}}`, -32602, "params.name"},
		{"arguments twice", `{"name":"` + add + `","arguments":{"a":1,"b":2},"arguments":{"a":7,"b":2}}`, -32602, "params.arguments"},
	} {
		for _, rev := range []struct {
			name   string
			header map[string]string
			extra  string
		}{{"2026-07-28", modern, `,"_meta":` + string(meta)}, {"legacy", legacy, ""}} {
			t.Run(tc.name+"/"+rev.name, func(t *testing.T) {
				params := strings.TrimSuffix(tc.params, "}") + rev.extra + "}"
				r := runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":`+params+`}`, rev.header)
				var ans runtimetest.RPCAnswer
				json.Unmarshal([]byte(r.Body), &ans)
				if r.Status != 400 || ans.Error == nil || ans.Error.Code != tc.code || !strings.Contains(ans.Error.Message, "the key "+tc.path+" is given twice") || string(ans.ID) != "9" {
					t.Errorf("%d %s; want 400 and %d naming %s", r.Status, r.Body, tc.code, tc.path)
				}
			})
		}
	}
	// A repeated argument stays a tool error, from the argument validator,
	// which reads the arguments exactly as sent.
	r := runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"`+add+`","arguments":{"a":1,"a":5,"b":2,"c":{"x":[{"y":1,"y":2}]}}}}`, legacy)
	if r.Status != 200 || !strings.Contains(r.Body, `field \"a\" is given more than once`) {
		t.Errorf("argument twice: %d %s", r.Status, r.Body)
	}
	// A duplicate outside params is an invalid request; the same call
	// without duplicates goes through.
	r = runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/list","method":"tools/call","params":{"name":"`+add+`","arguments":{"a":1,"b":2},"_meta":`+string(meta)+`}}`, modern)
	if !strings.Contains(r.Body, `-32600`) || r.Status != 400 {
		t.Errorf("method twice: %d %s", r.Status, r.Body)
	}
	r = runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"`+add+`","arguments":{"a":1,"b":2}}}`, legacy)
	if r.Status != 200 || !strings.Contains(r.Body, `"sum":3`) {
		t.Errorf("the call without duplicates: %d %s", r.Status, r.Body)
	}
	// Deep nesting outside the arguments is refused at 64 levels, at once:
	// the scanner once kept a frame and a growing path per level, so a few
	// megabytes of brackets took minutes and gigabytes.
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	r = runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"`+add+`","meta":`+deep+`}}`, legacy)
	if r.Status != 400 || !strings.Contains(r.Body, "nested more than 64 levels") {
		t.Errorf("deep nesting: %d %.200s", r.Status, r.Body)
	}
	// Inside the arguments, which the scanner skips, past the 1000 levels
	// that go-sdk's decoder takes (counting the message's and params'
	// own): invalid params, where go-sdk answered a plain-text 400.
	for _, tc := range []struct {
		depth   int
		refused bool
	}{{1000, false}, {1001, true}, {100000, true}} {
		n := tc.depth - 3 // the message, params and arguments objects
		args := `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		r = runtimetest.Do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"`+add+`","arguments":`+args+`}}`, legacy)
		refused := r.Status == 400 && strings.Contains(r.Body, `"code":-32602`) && strings.Contains(r.Body, "nested more than 1000 levels deep, in params.arguments")
		if refused != tc.refused || strings.Contains(r.Body, "malformed payload") {
			t.Errorf("arguments nested %d deep in all: %d %.200s; want refused %v, with a JSON-RPC error", tc.depth, r.Status, r.Body, tc.refused)
		}
	}
}
