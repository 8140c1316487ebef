package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// smallSendBuffers is a listener whose connections have small send
// buffers, so that a client that does not read blocks the server's writes
// soon.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// TestWriteDeadlineIsNotClaimed: a request that claims to open a
// notification stream (Mcp-Method: subscriptions/listen), in a legacy
// session whose revision does not check the header, but is a call, keeps
// the write deadline of an answer: a client that stops reading its large
// answer loses the connection once the deadline passes. The header alone
// exempted it from any deadline, and the blocked write held the
// connection for good.
func TestWriteDeadlineIsNotClaimed(t *testing.T) {
	const size = 3 << 20
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "big", Version: "1.0.0", Description: "A large answer",
		Tools: []*catalog.Tool{{Name: "blob", Description: "Answer 3 MiB of text"}},
	}}}
	cat.Seal()
	rt := runtime.New(runtime.Options{MaxResultBytes: 2 * size})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"big": runtime.Local(plugins.Handle("blob", func(context.Context, struct{}) (*plugins.Result, error) {
		return plugins.Text(strings.Repeat("x", size)), nil
	}))}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := httpapi.ConnLimits{WriteTimeout: 200 * time.Millisecond, CallTimeout: 200 * time.Millisecond}
	hs := httpapi.NewHTTPServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{}), httpapi.Options{}), l)
	go hs.Serve(smallSendBuffers{ln})
	t.Cleanup(func() { hs.Close() })
	addr := ln.Addr().String()

	post := func(body string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	init := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := init.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %d, no session", init.StatusCode)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", session, "MCP-Protocol-Version", "2025-11-25")

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big_blob","arguments":{}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		addr, session, len(body), body)
	time.Sleep(1500 * time.Millisecond) // past the deadline, reading nothing
	if !closedWithin(conn, 10*time.Second) {
		t.Error("the connection of a call whose client stopped reading was not closed after its write deadline")
	}
}
