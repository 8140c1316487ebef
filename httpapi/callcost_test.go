package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// TestCallAllocBudget holds the allocations of one call, on each path a
// call takes, to a budget: the count measured when the budget was set
// (issue 27) and a little room for the noise of background goroutines.
// It fails when a change makes calls allocate more; lower the budget when
// one makes them allocate less. A call through a plugin counts the host's
// allocations only.
func TestCallAllocBudget(t *testing.T) {
	if raceOn {
		t.Skip("the race detector's sync.Pool drops values at random")
	}
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	h := httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{}), httpapi.Options{})
	add := runtimetest.MCPName(t, "add")
	say := runtimetest.MCPName(t, "say")

	post := func(header http.Header, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header = header.Clone()
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code/100 != 2 {
			t.Fatalf("%s: %d %s", body, w.Code, w.Body)
		}
		return w
	}
	callBody := func(name, args, meta string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + meta + `}}`
	}
	// A 2025-11-25 session.
	legacy := http.Header{}
	w := post(legacy, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	legacy.Set("Mcp-Session-Id", w.Header().Get("Mcp-Session-Id"))
	legacy.Set("MCP-Protocol-Version", "2025-11-25")
	post(legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	modern := http.Header{}
	modern.Set("MCP-Protocol-Version", "2026-07-28")
	modern.Set("Mcp-Method", "tools/call")
	meta, _ := json.Marshal(runtimetest.Meta2026("2026-07-28"))
	// The _meta of go-sdk's client as it comes, which declares roots.
	rootsMeta := runtimetest.Meta2026("2026-07-28")
	rootsMeta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"roots": map[string]any{"listChanged": true}}
	roots, _ := json.Marshal(rootsMeta)
	// A 2025-11-25 session over stdio, as toolc serve --stdio serves it.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		mcpserver.ServeStdio(ctx, rt, mcpserver.New(rt, mcpserver.Options{}), inR, outW, mcpserver.StdioOptions{})
		close(served)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-served })
	stdout := bufio.NewReader(outR)
	stdio := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		answer, err := stdout.ReadSlice('\n')
		if err != nil || !strings.Contains(string(answer), `"result"`) {
			t.Fatalf("%s: %s %v", line, answer, err)
		}
	}
	stdio(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	stdioID := 0

	for _, tc := range []struct {
		name   string
		budget float64
		// bytes is the budget of bytes allocated per call: a call
		// that takes buffers it does not need (go-sdk's decoder takes
		// two of 32 KiB) fails it without one allocation more.
		bytes uint64
		call  func()
	}{
		{"runtime.Call/in-process", 22, 1500, func() { runtimetest.WantOK(t, runtimetest.Call(t, rt, "add", `{"a":1,"b":2}`)) }},
		{"runtime.Call/plugin", 50, 3000, func() { runtimetest.WantOK(t, runtimetest.Call(t, rt, "say", `{"text":"hi"}`)) }},
		{"mcp-2025-11-25/in-process", 103, 14 << 10, func() { post(legacy, callBody(add, `{"a":1,"b":2}`, "")) }},
		{"mcp-2025-11-25/plugin", 130, 16 << 10, func() { post(legacy, callBody(say, `{"text":"hi"}`, "")) }},
		{"mcp-2026-07-28/in-process", 111, 16 << 10, func() {
			modern.Set("Mcp-Name", add)
			post(modern, callBody(add, `{"a":1,"b":2}`, `,"_meta":`+string(meta)))
		}},
		{"mcp-2026-07-28/in-process, roots", 119, 16 << 10, func() {
			modern.Set("Mcp-Name", add)
			post(modern, callBody(add, `{"a":1,"b":2}`, `,"_meta":`+string(roots)))
		}},
		{"mcp-stdio-2025-11-25/in-process", 59, 5 << 10, func() {
			stdioID++
			stdio(`{"jsonrpc":"2.0","id":` + strconv.Itoa(stdioID) + `,"method":"tools/call","params":{"name":"` + add + `","arguments":{"a":1,"b":2}}}`)
		}},
		{"v1-call/in-process", 56, 10 << 10, func() {
			req := httptest.NewRequest("POST", "/v1/call", strings.NewReader(`{"name":"add","arguments":{"a":1,"b":2}}`))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				t.Fatalf("/v1/call: %d %s", w.Code, w.Body)
			}
		}},
	} {
		tc.call() // the first call of a path makes what later calls reuse
		got := testing.AllocsPerRun(200, tc.call)
		bytes := bytesPerRun(200, tc.call)
		t.Logf("%s: %.0f allocations, %d bytes per call", tc.name, got, bytes)
		if tc.budget > 0 && got > tc.budget {
			t.Errorf("%s: %.0f allocations per call, over the budget of %.0f", tc.name, got, tc.budget)
		}
		if bytes > tc.bytes {
			t.Errorf("%s: %d bytes allocated per call, over the budget of %d", tc.name, bytes, tc.bytes)
		}
	}
}

// bytesPerRun is testing.AllocsPerRun for the bytes allocated: the
// average over n calls of f, after one more.
func bytesPerRun(n int, f func()) uint64 {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	f()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range n {
		f()
	}
	goruntime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}
