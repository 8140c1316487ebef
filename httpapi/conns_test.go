package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// serveLimited serves the test runtime with limits, on a real listener, as
// toolc serve does, and returns its address.
func serveLimited(t *testing.T, rt *runtime.Runtime, hopts httpapi.Options, l httpapi.ConnLimits) string {
	t.Helper()
	addr, _ := serveLimitedMCP(t, rt, hopts, l)
	return addr
}

// serveLimitedMCP is serveLimited that also returns the MCP server.
func serveLimitedMCP(t *testing.T, rt *runtime.Runtime, hopts httpapi.Options, l httpapi.ConnLimits) (string, *mcp.Server) {
	t.Helper()
	srv := mcpserver.New(rt, mcpserver.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httpapi.NewHTTPServer(httpapi.NewHandler(rt, srv, hopts), l)
	go hs.Serve(httpapi.LimitListener(ln, l))
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String(), srv
}

// closedWithin reports whether the server closes conn within d: a read
// ends (EOF or a reset), after whatever the server wrote before.
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return err == nil || !(errorsAs(err, &ne) && ne.Timeout())
}

func errorsAs(err error, ne *net.Error) bool {
	e, ok := err.(net.Error)
	if ok {
		*ne = e
	}
	return ok
}

// TestConnectionLimits: a client cannot hold a connection by sending a
// body slowly or by keeping it alive idle, nor hold more connections than
// the cap; and a call that streams for longer than the read and write
// timeouts still completes, over /v1/call and over an MCP session. Before,
// only ReadHeaderTimeout was set, and slow bodies and idle keep-alives
// stayed open for good.
func TestConnectionLimits(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{CallTimeout: 10 * time.Second}, p)
	l := httpapi.ConnLimits{ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		IdleTimeout: 300 * time.Millisecond, CallTimeout: 10 * time.Second, MaxConns: 4}
	addr := serveLimited(t, rt, httpapi.Options{}, l)

	t.Run("slow body", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":", addr)
		go func() { // a byte now and then, as a slowloris sends
			for range 50 {
				time.Sleep(100 * time.Millisecond)
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
		if !closedWithin(conn, 3*time.Second) {
			t.Error("a POST whose body trickles in was not cut off")
		}
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !closedWithin(conn, 3*time.Second) {
			t.Error("an idle kept-alive connection was not closed")
		}
	})

	t.Run("connection cap", func(t *testing.T) {
		// A server of its own, whose read timeout outlasts the test:
		// with 0.3 s, a held connection could be closed before the
		// fifth was tried, on a loaded machine, and the fifth served.
		capped := l
		capped.ReadTimeout = time.Minute
		addr := serveLimited(t, rt, httpapi.Options{}, capped)
		var held []net.Conn
		for range 4 {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Half a request header: the server is reading it, so the
			// connection is neither idle nor done.
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\n")
			held = append(held, conn)
		}
		time.Sleep(50 * time.Millisecond)
		c := &http.Client{Timeout: 500 * time.Millisecond}
		if resp, err := c.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			t.Error("a fifth connection was served while four were held, with MaxConns 4")
		}
		for _, conn := range held {
			conn.Close()
		}
		c.Timeout = 5 * time.Second
		resp, err := c.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("no connection once the held ones closed: %v", err)
		}
		resp.Body.Close()
	})

	t.Run("long call over /v1/call", func(t *testing.T) {
		start := time.Now()
		resp, err := http.Post("http://"+addr+"/v1/call", "application/json", strings.NewReader(`{"name":"sleep","arguments":{"ms":1500}}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || strings.Contains(string(body), `"isError":true`) {
			t.Fatalf("a 1.5 s call with 0.3 s timeouts: %d %s %v", resp.StatusCode, body, err)
		}
		if time.Since(start) < 1500*time.Millisecond {
			t.Errorf("the call took %v, less than it sleeps", time.Since(start))
		}
	})

	t.Run("long call over MCP", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "sleep"), Arguments: map[string]any{"ms": 1500},
			Meta: mcp.Meta{"progressToken": "p"}})
		if err != nil || res.IsError {
			t.Fatalf("a 1.5 s streamed call with 0.3 s timeouts: %v %+v", err, res)
		}
	})
}

// TestSessionLimits: MCP sessions are capped, the least recently used
// idle one going first and one with a call in flight never, and an idle
// session expires. Before, 20,000 initialize requests held 20,000 sessions
// and goroutines for good.
func TestSessionLimits(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(t *testing.T, addr string) *mcp.ClientSession {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	alive := func(s *mcp.ClientSession) bool {
		_, err := s.ListTools(ctx, nil)
		return err == nil
	}

	t.Run("cap", func(t *testing.T) {
		addr, srv := serveLimitedMCP(t, rt, httpapi.Options{MCP: mcpserver.HTTPOptions{MaxSessions: 3}}, httpapi.ConnLimits{})
		busy := connect(t, addr)
		calls := make(chan error, 1)
		go func() {
			_, err := busy.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "sleep"), Arguments: map[string]any{"ms": 2000}})
			calls <- err
		}()
		time.Sleep(200 * time.Millisecond) // the call is in flight
		a, b := connect(t, addr), connect(t, addr)
		alive(a) // a is now more recently used than b
		c := connect(t, addr)
		// Four sessions, cap three: b, the least recently used idle one,
		// goes, once the server has seen that c's initialize is answered.
		testsync.WaitFor(t, 5*time.Second, "three sessions", func() bool {
			n := 0
			for range srv.Sessions() {
				n++
			}
			return n == 3
		})
		if alive(b) {
			t.Error("the least recently used idle session outlived the cap")
		}
		if !alive(a) || !alive(c) {
			t.Error("a recently used session was closed")
		}
		if err := <-calls; err != nil {
			t.Errorf("the call in flight on the oldest session: %v", err)
		}
	})

	t.Run("idle timeout", func(t *testing.T) {
		addr := serveLimited(t, rt, httpapi.Options{MCP: mcpserver.HTTPOptions{SessionIdleTimeout: 300 * time.Millisecond}}, httpapi.ConnLimits{})
		s := connect(t, addr)
		if !alive(s) {
			t.Fatal("a new session is not alive")
		}
		time.Sleep(time.Second)
		if alive(s) {
			t.Error("a session idle for three times its timeout is still alive")
		}
	})
}

// TestNotificationStreamOutlivesWriteTimeout: a 2026-07-28 listen stream,
// which carries list_changed for as long as its client keeps it, is not cut
// off by the write timeout, which bounds answers.
func TestNotificationStreamOutlivesWriteTimeout(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{CallTimeout: 200 * time.Millisecond}, p)
	addr := serveLimited(t, rt, httpapi.Options{}, httpapi.ConnLimits{WriteTimeout: 200 * time.Millisecond, CallTimeout: 200 * time.Millisecond})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": map[string]any{
		"_meta": runtimetest.Meta2026("2026-07-28"), "notifications": map[string]any{"toolsListChanged": true},
	}})
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	changed := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if strings.Contains(lines.Text(), "notifications/tools/list_changed") {
				changed <- true
				return
			}
		}
		changed <- false
	}()
	time.Sleep(time.Second) // twice the write timeout and the call timeout
	sub, err := runtimetest.Setup(t).Catalog.Select("echo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Swap(sub, map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(runtimetest.InprocHandlers()...)}); err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-changed:
		if !ok {
			t.Error("the listen stream ended before list_changed")
		}
	case <-time.After(10 * time.Second):
		t.Error("no list_changed on the listen stream")
	}
}
