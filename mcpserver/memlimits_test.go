package mcpserver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

// memInUse is the heap in use and the goroutine stacks, once the garbage
// is collected.
func memInUse() int64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// TestMemoryAtLimits measures what legacy sessions and notification
// streams hold at the documented caps (BENCHMARKS.md, "Memory at the
// limits"): 1000 sessions, each filled as much as a client can (16 KiB of
// capabilities, the client info cut to 256 bytes a field, a last request
// of 16 KiB, just under the size that releaseLast releases), and as
// little; and 256 idle subscriptions/listen streams. It runs with
// TOOLC_LIMIT_MEMORY=1.
func TestMemoryAtLimits(t *testing.T) {
	if os.Getenv("TOOLC_LIMIT_MEMORY") == "" {
		t.Skip("TOOLC_LIMIT_MEMORY=1 measures the memory at the limits")
	}
	var r ran
	rt := testRuntime(t, &r)
	srv := New(rt, Options{})
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)

	sessions := func(worst bool) {
		caps, name, text := `{}`, "client", "hi"
		if worst {
			caps = `{"experimental":{"x":"` + strings.Repeat("x", maxInitializeParams-64) + `"}}`
			name = strings.Repeat("n", 64<<10)
			text = strings.Repeat("y", releaseAbove-128)
		}
		before := memInUse()
		for range DefaultMaxSessions {
			a := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+
				`,"clientInfo":{"name":"`+name+`","title":"`+name+`","version":"`+name+`"}}}`, nil)
			if a.status != 200 {
				t.Fatalf("initialize: %d %.200s", a.status, a.raw)
			}
			h := http.Header{"Mcp-Session-Id": {a.sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
			postMCP(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
			postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"svc_ping","arguments":{"text":"`+text+`"}}}`, h)
		}
		r.take()
		held := memInUse() - before
		n := 0
		for range srv.Sessions() {
			n++
		}
		fmt.Printf("sessions worst=%v: %d live, %.1f MiB, %.1f KiB each\n", worst, n, float64(held)/(1<<20), float64(held)/float64(n)/1024)
		for ss := range srv.Sessions() {
			ss.Close()
		}
		time.Sleep(time.Second)
	}
	sessions(false)
	sessions(true)

	// One client here, so no cap per caller: the total cap is the
	// server's bound.
	ts = httptest.NewServer(NewHTTPHandler(rt, New(rt, Options{}), HTTPOptions{MaxCallerStreams: -1}))
	t.Cleanup(ts.Close)
	before := memInUse()
	var conns []net.Conn
	for i := range DefaultMaxStreams {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := listenBody(fmt.Sprint("l", i))
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", ts.Listener.Addr(), len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("listen stream %d: %v %v", i, resp, err)
		}
		conns = append(conns, conn)
	}
	held := memInUse() - before
	fmt.Printf("listen streams: %d open, %.1f MiB, %.1f KiB each\n", len(conns), float64(held)/(1<<20), float64(held)/float64(len(conns))/1024)
}
