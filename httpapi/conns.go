package httpapi

import (
	"cmp"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"

	"github.com/toolc/toolc/internal/bodymem"
	"github.com/toolc/toolc/runtime"
)

// Defaults of ConnLimits.
const (
	DefaultMaxConns     = 1024
	DefaultReadTimeout  = 30 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	DefaultIdleTimeout  = 2 * time.Minute
	// DefaultMaxBodyMemory is the default of ConnLimits.MaxBodyMemory.
	DefaultMaxBodyMemory = 128 << 20
)

// ConnLimits bounds what one client can hold of an HTTP server: the
// connections, and the time each request may take to arrive, to be
// answered, and to sit idle between requests. For every field, 0 means
// its default and a negative value no bound.
type ConnLimits struct {
	// MaxConns caps the open connections; past it, the server accepts a
	// new one only when another closes (the kernel queues it meanwhile).
	MaxConns int
	// ReadTimeout bounds reading a request's header and body. Once the
	// body is in, no read deadline is left, so it never ends a long call.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response. /mcp and /v1/call may take
	// CallTimeout on top of it, as their answer waits for the call. The
	// streams that carry notifications (a legacy session's GET, a
	// 2026-07-28 subscriptions/listen) stay open for as long as their
	// client wants: package mcpserver, which reads what a request is,
	// gives each write to one a deadline of its own
	// (mcpserver.HTTPOptions.StreamWriteTimeout; set it to WriteTimeout).
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request for
	// that long.
	IdleTimeout time.Duration
	// MaxBodyMemory bounds the bytes that the bodies of all requests in
	// flight hold at once, beyond the first 64 KiB of each
	// (bodymem.Free): a read past it fails, and the request gets 503 and
	// Retry-After. Each body has its own bound too (/v1/call's and /mcp's),
	// but a thousand connections each sending a maximal body slowly held
	// a thousand of them for ReadTimeout: 8 GiB. So bodies in flight hold
	// at most MaxBodyMemory + MaxConns × 64 KiB, and no client can fill
	// memory by sending slowly.
	MaxBodyMemory int64
	// CallTimeout is the runtime's bound on one call
	// (runtime.Options.CallTimeout); Serve takes the runtime's when it is
	// 0.
	CallTimeout time.Duration
}

func (l ConnLimits) or() ConnLimits {
	l.MaxConns = cmp.Or(l.MaxConns, DefaultMaxConns)
	l.ReadTimeout = cmp.Or(l.ReadTimeout, DefaultReadTimeout)
	l.WriteTimeout = cmp.Or(l.WriteTimeout, DefaultWriteTimeout)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, DefaultIdleTimeout)
	l.MaxBodyMemory = cmp.Or(l.MaxBodyMemory, DefaultMaxBodyMemory)
	l.CallTimeout = cmp.Or(l.CallTimeout, runtime.DefaultCallTimeout)
	return l
}

// MaxHeaderBytes bounds a request's header (its request line and fields):
// a larger one gets 431. net/http's default, 1 MiB, let a thousand
// connections each sending a header slowly hold a gigabyte for
// ReadTimeout; a bearer token takes a few KiB, and a ?tools= of
// MaxSelectTools names under 64.
const MaxHeaderBytes = 96 << 10

// NewHTTPServer returns an http.Server for h with the limits' timeouts.
// The read and write deadlines are set per request, not with
// http.Server's ReadTimeout and WriteTimeout, which hold for the whole of
// a request, and so would end a long call or stream that is doing
// nothing wrong.
func NewHTTPServer(h http.Handler, l ConnLimits) *http.Server {
	l = l.or()
	return &http.Server{
		Handler:           withDeadlines(h, l, bodymem.New(l.MaxBodyMemory)),
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: max(l.ReadTimeout, 0),
		IdleTimeout:       max(l.IdleTimeout, 0),
	}
}

// LimitListener caps the connections that ln accepts at l.MaxConns, with
// golang.org/x/net/netutil's LimitListener, which holds a connection's
// slot until it closes.
func LimitListener(ln net.Listener, l ConnLimits) net.Listener {
	if l = l.or(); l.MaxConns < 0 {
		return ln
	}
	return netutil.LimitListener(ln, l.MaxConns)
}

func withDeadlines(h http.Handler, l ConnLimits, budget *bodymem.Budget) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		if budget != nil && r.Body != nil && r.Body != http.NoBody {
			b := budget.Wrap(r.Body)
			r.Body = b
			// The body's bytes are held until its handler is done with
			// them: the budget is given back when the request ends.
			defer b.Release()
		}
		if l.ReadTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
			// Errors mean the connection cannot take deadlines (a test
			// recorder, say): there is nothing to bound then.
			_ = rc.SetReadDeadline(now.Add(l.ReadTimeout))
			r.Body = &bodyDeadline{ReadCloser: r.Body, rc: rc}
		}
		if l.WriteTimeout > 0 {
			// Every request has one, whatever its headers claim: a
			// notification stream's writes get their own deadlines from
			// mcpserver, which knows a stream by its body, not by a
			// header any request can carry (Mcp-Method).
			switch r.URL.Path {
			case "/mcp", "/v1/call":
				_ = rc.SetWriteDeadline(now.Add(max(l.CallTimeout, 0) + l.WriteTimeout))
			default:
				_ = rc.SetWriteDeadline(now.Add(l.WriteTimeout))
			}
		}
		h.ServeHTTP(w, r)
	})
}

// bodyDeadline lifts the read deadline once the body is read: the server
// reads on in the background, to see the client go, and a deadline then
// would cancel the request as if it had.
type bodyDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
