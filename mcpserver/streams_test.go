package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenBody is a 2026-07-28 subscriptions/listen request.
func listenBody(id string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"subscriptions/listen","params":{"_meta":` + meta2026 + `,"notifications":{"toolsListChanged":true}}}`
}

// openListen POSTs a subscriptions/listen with the bearer token (none for
// "") and returns the response once its header is in, its body still
// open, and a func that closes it.
func openListen(t *testing.T, url, token, id string) (*http.Response, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/mcp", strings.NewReader(listenBody(id)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header2026("subscriptions/listen", "")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closer := func() { cancel(); resp.Body.Close() }
	t.Cleanup(closer)
	return resp, closer
}

// TestStreamCaps: notification streams are capped per caller (here its
// OAuth subject) and in total. One caller with a valid token and no scopes
// could hold every connection of the server with subscriptions/listen
// streams, and every other client hung. A stream past a cap gets 429 with
// a JSON-RPC error; go-sdk's client, which opens its listen stream as it
// connects, is told why; a stream that closes frees its place.
func TestStreamCaps(t *testing.T) {
	var r ran
	rt := testRuntime(t, &r)
	iss := newTestIssuer(t)
	ts := serveMCP(t, rt, HTTPOptions{OAuth: iss.verifier(t), MaxStreams: 3, MaxCallerStreams: 2})
	mallory, alice := iss.token(t, "mallory", ""), iss.token(t, "alice", "")

	first, closeFirst := openListen(t, ts.URL, mallory, "m1")
	if first.StatusCode != 200 {
		t.Fatalf("mallory's first listen: %d", first.StatusCode)
	}
	// go-sdk's client at 2026-07-28 opens its listen stream as it
	// connects, when it handles list_changed; listened has the status of
	// each of its subscriptions/listen.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	listened := make(chan int, 4)
	dial := func(token string) *mcp.ClientSession {
		t.Helper()
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err == nil && r.Header.Get("Mcp-Method") == "subscriptions/listen" {
				listened <- resp.StatusCode
			}
			return resp, err
		})
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
		})
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	status := func() int {
		select {
		case code := <-listened:
			return code
		case <-ctx.Done():
			t.Fatal("go-sdk's client opened no listen stream")
			return 0
		}
	}
	dial(mallory)
	if code := status(); code != 200 {
		t.Fatalf("mallory's second stream, by go-sdk's client: %d", code)
	}
	dial(mallory) // go-sdk's client goes on without list_changed
	if code := status(); code != http.StatusTooManyRequests {
		t.Errorf("mallory's third stream: %d, want 429", code)
	}

	if a, _ := openListen(t, ts.URL, alice, "a1"); a.StatusCode != 200 {
		t.Fatalf("alice's first listen, the server's third stream: %d", a.StatusCode)
	}
	a2 := postMCP(t, ts.URL, listenBody("a2"), header2026("subscriptions/listen", "", "Authorization", "Bearer "+alice))
	if a2.status != http.StatusTooManyRequests || a2.Error == nil || a2.Error.Code != CodeTooManyStreams || string(a2.ID) != `"a2"` ||
		!strings.Contains(a2.Error.Message, "the server has 3 open") {
		t.Errorf("alice's second listen, the server's fourth stream: %d %s, want 429 and %d", a2.status, a2.raw, CodeTooManyStreams)
	}

	// A stream that ends frees its place.
	closeFirst()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, closeIt := openListen(t, ts.URL, alice, "a3")
		if resp.StatusCode == 200 {
			break
		}
		closeIt()
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's place was never freed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// smallBuffers is a listener whose connections have small send buffers,
// so that a client that does not read blocks the server's writes soon.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// TestStreamWriteDeadline: a client that opens a listen stream and stops
// reading is dropped once a write to it cannot finish within the stream
// write timeout, and its place is freed; the stream had no deadline at
// all, so its writer blocked for good and the stream held its connection.
// A legacy session's GET stream counts against the same caps, by its
// caller's IP address without OAuth.
func TestStreamWriteDeadline(t *testing.T) {
	var r ran
	rt := testRuntime(t, &r)
	ts := httptest.NewUnstartedServer(NewHTTPHandler(rt, New(rt, Options{}), HTTPOptions{MaxCallerStreams: 1, StreamWriteTimeout: 300 * time.Millisecond}))
	ts.Listener = smallBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := listenBody("slow")
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", ts.Listener.Addr(), len(body), body)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the listen stream: %v %v", resp, err)
	}
	// From here on the client reads nothing.

	// The caller's one stream is open: another, a GET of a legacy
	// session, is refused.
	init := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if init.status != 200 {
		t.Fatalf("initialize: %d %s", init.status, init.raw)
	}
	get := func() int {
		req, _ := http.NewRequest("GET", ts.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", "none")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0 // not 429 either: the caller's test says what it got
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusTooManyRequests {
		t.Fatalf("a GET stream beside the caller's one listen stream: %d, want 429", code)
	}

	// list_changed, again and again, fills the connection's buffers.
	full, half := testCatalog(), testCatalog()
	half.Services = half.Services[:1]
	half.Services[0].Tools = half.Services[0].Tools[:1]
	half.Seal()
	dispatchers := testDispatchers(&r)
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		end := time.Now().Add(30 * time.Second)
		for i := 0; time.Now().Before(end); i++ {
			cat := full
			if i%2 == 0 {
				cat = half
			}
			if _, err := rt.Swap(cat, dispatchers); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(15 * time.Millisecond)
			if code := get(); code != http.StatusTooManyRequests {
				return // the place is free: the stream was dropped
			}
		}
	}()
	select {
	case <-dropped:
	case <-time.After(30 * time.Second):
		t.Fatal("a listen stream whose client reads nothing was never dropped")
	}
}
