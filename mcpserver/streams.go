package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolc/toolc/internal/httpjson"
	"github.com/toolc/toolc/oauth"
)

// Notification streams stay open for as long as their client wants: a
// 2026-07-28 subscriptions/listen, and a legacy session's GET. Each holds a
// connection, so without a bound one caller could hold every connection
// the server takes (--max-conns) with them, and every other client would
// hang; and one whose client stops reading would block its writer for
// good. So the streams are capped, in total and per caller, and each
// write to one must finish within the write timeout, or the stream is
// dropped. Waits for go-sdk: caps on its streams, and a deadline on each
// write to one.
//
// What a request is comes from its parsed body (a message whose method is
// subscriptions/listen), never from a header that claims it
// (Mcp-Method), which any request can carry; every other request has the
// write deadline that httpapi gives an answer.

// Defaults of HTTPOptions.MaxStreams, MaxCallerStreams and
// StreamWriteTimeout. An idle stream costs a connection, its goroutines
// and about 50 KiB (BENCHMARKS.md), so the cap bounds that memory near
// 12.5 MiB, and leaves most of the default 1024 connections to calls.
const (
	DefaultMaxStreams         = 256
	DefaultMaxCallerStreams   = 32
	DefaultStreamWriteTimeout = 30 * time.Second
)

// streamGuard caps the notification streams and bounds each write to one.
type streamGuard struct {
	next           http.Handler
	max, perCaller int // <= 0: none
	timeout        time.Duration

	mu       sync.Mutex
	total    int
	byCaller map[string]int
}

func newStreamGuard(next http.Handler, opts HTTPOptions) *streamGuard {
	orDefault := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	timeout := opts.StreamWriteTimeout
	if timeout == 0 {
		timeout = DefaultStreamWriteTimeout
	}
	return &streamGuard{
		next: next, max: orDefault(opts.MaxStreams, DefaultMaxStreams), perCaller: orDefault(opts.MaxCallerStreams, DefaultMaxCallerStreams),
		timeout: timeout, byCaller: map[string]int{},
	}
}

func (g *streamGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isStream(r) {
		g.next.ServeHTTP(w, r)
		return
	}
	caller := streamCaller(r)
	if why := g.acquire(caller); why != "" {
		w.Header().Set("Retry-After", "10")
		if b, ok := r.Body.(*mcpBody); ok {
			id := idOf(b.data)
			if id == nil {
				id = []byte("null")
			}
			httpjson.Write(w, http.StatusTooManyRequests, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
				"code": CodeTooManyStreams, "message": why,
			}})
		} else {
			httpjson.Error(w, http.StatusTooManyRequests, why)
		}
		return
	}
	defer g.release(caller)
	if g.timeout > 0 {
		w = &streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: g.timeout}
	}
	g.next.ServeHTTP(w, r)
}

// CodeTooManyStreams is the JSON-RPC error of a subscriptions/listen
// refused because its caller, or the server, has as many notification
// streams open as the caps allow (HTTP 429). MCP defines none; -32000 is
// the first of JSON-RPC's server errors.
const CodeTooManyStreams = -32000

// acquire counts a new stream of the caller, or says why it may not open.
func (g *streamGuard) acquire(caller string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.perCaller > 0 && g.byCaller[caller] >= g.perCaller:
		return fmt.Sprintf("too many notification streams: this caller has %d open, the most a caller may (--max-caller-streams); close one first", g.byCaller[caller])
	case g.max > 0 && g.total >= g.max:
		return fmt.Sprintf("too many notification streams: the server has %d open, the most it keeps (--max-streams); retry later", g.total)
	}
	g.total++
	g.byCaller[caller]++
	return ""
}

func (g *streamGuard) release(caller string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.byCaller[caller]--; g.byCaller[caller] <= 0 {
		delete(g.byCaller, caller)
	}
}

// isStream reports whether r opens a notification stream: a GET (a legacy
// session's stream, or a resumption of one), or a POST with a
// subscriptions/listen request, as go-sdk reads the body.
func isStream(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		b, ok := r.Body.(*mcpBody)
		if !ok {
			return false
		}
		msgs, _, _ := b.messages()
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "subscriptions/listen" {
				return true
			}
		}
	}
	return false
}

// streamCaller is who a stream counts against: the OAuth subject, or
// without OAuth the client's IP address (with --token every client holds
// the one token). Behind a reverse proxy every client has the proxy's
// address, and the cap per caller is the proxy's: raise it, or put the cap
// in the proxy.
func streamCaller(r *http.Request) string {
	if c := oauth.CallerFrom(r.Context()); c != nil {
		return "sub:" + c.Subject
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// streamWriter gives each write to a stream its own deadline: a client
// that stops reading fills the connection's buffers, the write waiting on
// it fails when the deadline passes, and go-sdk ends the stream. An idle
// stream has no deadline to miss.
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *streamWriter) deadline() {
	// An error means the connection takes no deadline (a test recorder):
	// there is nothing to bound then.
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
}

func (w *streamWriter) WriteHeader(code int) { w.deadline(); w.ResponseWriter.WriteHeader(code) }

func (w *streamWriter) Write(p []byte) (int, error) { w.deadline(); return w.ResponseWriter.Write(p) }

func (w *streamWriter) Flush() {
	w.deadline()
	_ = w.rc.Flush()
}

// Unwrap gives http.ResponseController the connection's own writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
