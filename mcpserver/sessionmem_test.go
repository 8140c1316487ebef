package mcpserver

import (
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// liveHeap is the heap in use once the garbage is collected.
func liveHeap() int64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSessionKeepsLittle: a legacy session keeps, of its initialize, the
// protocol version, the capabilities and the client's name, title and
// version cut to 256 bytes each; nothing of notifications/initialized; a
// logging level MCP defines, or the setLevel is refused; and not the body
// of its last request, a call or a notification.
// With a 1 MiB clientInfo each session kept 2 MiB, and each idle session
// kept the whole body of its last request (go-sdk's queue held it), so
// the 1000 sessions of the default cap could hold gigabytes. Capabilities
// and the rest over 16 KiB are refused.
func TestSessionKeepsLittle(t *testing.T) {
	var r ran
	rt := testRuntime(t, &r)
	srv := New(rt, Options{})
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)
	big := strings.Repeat("x", 512<<10)
	initialize := func(params string) answer {
		return postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+params+`}`, nil)
	}

	const n = 16
	before := liveHeap()
	for range n {
		a := initialize(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + big + `","version":"1","icons":[{"src":"data:image/png;base64,` + big + `"}]},"x":"` + big + `"}`)
		if a.status != 200 || a.sid == "" {
			t.Fatalf("initialize with a 512 KiB client info: %d %.300s", a.status, a.raw)
		}
		h := http.Header{"Mcp-Session-Id": {a.sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
		postMCP(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"x":"`+big+`"}}}`, h)
		if c := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"svc_ping","arguments":{"text":"`+big+`"}}}`, h); c.status != 200 {
			t.Fatalf("a 512 KiB call: %d %.300s", c.status, c.raw)
		}
		// A notification's POST ends before go-sdk handles it.
		postMCP(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"`+big+`","progress":1}}`, h)
	}
	r.take() // what the test's handler recorded is the test's
	per := (liveHeap() - before) / n
	t.Logf("each idle session keeps %d KiB", per>>10)
	// About 45 KiB alone; the bound is well under the 512 KiB that a kept
	// body costs, and above what -race and other tests' garbage add to the
	// measure in a loaded run of the whole package (71 KiB once).
	if per > 128<<10 {
		t.Errorf("each idle session keeps %d KiB after a 512 KiB initialize and a 512 KiB call, want under 128 KiB", per>>10)
	}
	sessions, sid := 0, ""
	for ss := range srv.Sessions() {
		sessions++
		sid = ss.ID()
		if p := ss.InitializeParams(); p == nil || p.ClientInfo == nil || len(p.ClientInfo.Name) != maxClientInfoField || p.ClientInfo.Icons != nil || p.ProtocolVersion != "2025-11-25" {
			t.Errorf("a session kept %+v", p)
		}
	}
	if sessions != n {
		t.Errorf("%d sessions, want %d", sessions, n)
	}

	a := initialize(`{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"x":"` + big + `"}},"clientInfo":{"name":"t","version":"1"}}`)
	if a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(a.Error.Message, "a session keeps at most 16384") {
		t.Errorf("initialize with 512 KiB of capabilities: %d %.300s", a.status, a.raw)
	}
	h := http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
	if a := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"`+big+`"}}`, h); a.status != http.StatusBadRequest ||
		a.Error == nil || a.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(a.Error.Message, "unknown logging level") || len(a.raw) > 2048 {
		t.Errorf("logging/setLevel of a 512 KiB level: %d %.300s", a.status, a.raw)
	}
	if a := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"warning"}}`, h); a.status != 200 || a.Error != nil {
		t.Errorf("logging/setLevel warning: %d %.300s", a.status, a.raw)
	}
	// A batch (2025-03-26) is slimmed too.
	b := postMCP(t, ts.URL, `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"experimental":{"x":"`+big+`"}},"clientInfo":{"name":"t","version":"1"}}}]`, nil)
	if b.status != http.StatusBadRequest {
		t.Errorf("a batch's initialize with 512 KiB of capabilities: %d %.300s", b.status, b.raw)
	}
}
