package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolc/toolc/internal/httpjson"
)

var _ http.ResponseWriter = discard{}

// Defaults of HTTPOptions.MaxSessions and SessionIdleTimeout. A session of
// a legacy revision costs about 8 KiB and a goroutine in go-sdk, and at
// most about 45 KiB however its client fills its initialize and its
// requests (slimSession, releaseLast; BENCHMARKS.md), so the cap bounds
// that memory near 45 MiB; the idle timeout frees what a client forgot,
// and a client that comes back after it gets 404, on which MCP has it
// start a new session.
const (
	DefaultMaxSessions        = 1000
	DefaultSessionIdleTimeout = 30 * time.Minute
)

// sessionCap keeps at most max MCP sessions of go-sdk's stateful handler
// live: when a new one makes more, it closes the least recently used
// session that has no request in flight. go-sdk v1.8.0 offers an idle
// timeout (StreamableHTTPOptions.SessionTimeout, which the stateful
// handler is given) but no cap, so the cap watches the session IDs of the
// requests that pass. Waits for go-sdk: a cap on its sessions, and a way
// to close one, which would also retire the DELETE made as the session's
// user (see opened).
type sessionCap struct {
	next http.Handler
	max  int

	mu    sync.Mutex
	clock uint64
	// live are the sessions made through this handler and not known to be
	// gone; a session that ends otherwise (idle, DELETE, a failed
	// initialize) leaves when the cap next counts.
	live map[string]*sessionUse
}

type sessionUse struct {
	last   uint64 // the clock at the start of its latest request
	active int    // its POSTs in flight
	// user is the OAuth user the session was opened for, which go-sdk
	// binds it to: only a DELETE of that user closes it.
	user string
}

func newSessionCap(next http.Handler, max int) http.Handler {
	if max <= 0 {
		return next
	}
	return &sessionCap{next: next, max: max, live: map[string]*sessionUse{}}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method == http.MethodPost && c.allBusy() {
			httpjson.Error(w, http.StatusServiceUnavailable, fmt.Sprintf("all %d MCP sessions have a request in flight; retry later", c.max))
			return
		}
		ow := &openWriter{ResponseWriter: w, c: c}
		if info := sdkauth.TokenInfoFromContext(r.Context()); info != nil {
			ow.user = info.UserID
		}
		c.next.ServeHTTP(ow, r)
		return
	}
	post := r.Method == http.MethodPost
	c.begin(id, post)
	defer c.end(id, post, r.Method == http.MethodDelete)
	c.next.ServeHTTP(w, r)
}

// openWriter records the session that go-sdk names in a response's
// header as the header goes out: before its client can know the ID, so
// that the cap counts every request of the session.
type openWriter struct {
	http.ResponseWriter
	c    *sessionCap
	user string // the OAuth user of the request, or ""
	sent bool
}

func (w *openWriter) note() {
	if !w.sent {
		w.sent = true
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			w.c.opened(id, w.user)
		}
	}
}

func (w *openWriter) WriteHeader(code int) { w.note(); w.ResponseWriter.WriteHeader(code) }

func (w *openWriter) Write(p []byte) (int, error) { w.note(); return w.ResponseWriter.Write(p) }

func (w *openWriter) Flush() {
	w.note()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's own writer.
func (w *openWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (c *sessionCap) allBusy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.live) < c.max {
		return false
	}
	for _, u := range c.live {
		if u.active == 0 {
			return false
		}
	}
	return true
}

func (c *sessionCap) begin(id string, post bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.live[id]; ok { // an unknown ID, go-sdk answers 404
		c.clock++
		u.last = c.clock
		if post {
			u.active++
		}
	}
}

func (c *sessionCap) end(id string, post, deleted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.live[id]; ok {
		if post && u.active > 0 {
			u.active--
		}
		if deleted {
			delete(c.live, id)
		}
	}
}

// opened records a new session, of the OAuth user user ("" for none), and
// closes the least recently used idle ones while there are more than max.
// A session is closed as its client would close it, with a DELETE to
// go-sdk's handler: that needs no search of the server's sessions, and a
// session that ended meanwhile (idle, DELETE, a failed initialize) is then
// just dropped. go-sdk refuses a DELETE of another user's session (403,
// "session user mismatch"), so the DELETE of an OAuth session is made as
// its user: without that, no session of an OAuth server was ever closed,
// and any valid token could open sessions until memory ran out.
func (c *sessionCap) opened(id, user string) {
	var victims []*sessionVictim
	c.mu.Lock()
	c.clock++
	c.live[id] = &sessionUse{last: c.clock, user: user}
	for len(c.live) > c.max {
		oldest := c.victim(id)
		if oldest == "" {
			break // every other session is busy: none is closed mid-call
		}
		victims = append(victims, &sessionVictim{oldest, c.live[oldest].user})
		delete(c.live, oldest)
	}
	c.mu.Unlock()
	for _, v := range victims {
		r, err := http.NewRequest(http.MethodDelete, "/mcp", nil)
		if err != nil {
			continue // a constant URL: cannot happen
		}
		r.Header.Set("Mcp-Session-Id", v.id)
		asSessionUser(c.next, v.user, r).ServeHTTP(discard{}, r)
	}
}

// asSessionUser returns next for a request of toolc's own, r, to the
// session of the OAuth user user ("" for none). go-sdk serves a session's
// requests only for its user, which it reads from the TokenInfo that its
// RequireBearerToken puts on the context, under a key of its own: so the
// request passes through one that vouches for the session's user.
func asSessionUser(next http.Handler, user string, r *http.Request) http.Handler {
	if user == "" {
		return next
	}
	asUser := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) {
		return &sdkauth.TokenInfo{UserID: user}, nil
	}
	r.Header.Set("Authorization", "Bearer session-cap")
	return sdkauth.RequireBearerToken(asUser, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
}

// releaseAbove is the size of a session's POST body past which
// releaseLast sends a ping after it.
const releaseAbove = 16 << 10

// releaseLast sends a session, after a POST whose body is larger than
// releaseAbove, two pings of toolc's own, one after the other. go-sdk's
// connection keeps the last requests it handled in its queue's backing
// array until a request arrives after they are handled (jsonrpc2's
// handleAsync pops the queue without clearing the slot), so every idle
// session held the body of its last request: up to the 4 MiB bound, 4 GiB
// at the session cap. A call's POST ends once it is handled, and the first
// ping's arrival lets its slot go; a notification's POST ends before it is
// handled, so the first ping may join it in the queue, and the second,
// which arrives once the first is answered, lets both go. Waits for
// go-sdk: a queue that lets go of what it has handled.
func releaseLast(next http.Handler) http.Handler {
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := r.Body.(*mcpBody)
		next.ServeHTTP(w, r)
		if !ok || r.Method != http.MethodPost || len(b.data) <= releaseAbove {
			return
		}
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			id = w.Header().Get("Mcp-Session-Id") // a new session's
		}
		if id == "" {
			return
		}
		user := ""
		if info := sdkauth.TokenInfoFromContext(r.Context()); info != nil {
			user = info.UserID
		}
		for range 2 {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"toolc-release-%d","method":"ping"}`, n.Add(1))
			ping, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodPost, "/mcp", strings.NewReader(body))
			if err != nil {
				return // a constant URL: cannot happen
			}
			ping.Host = r.Host // go-sdk holds a loopback listener to loopback names
			ping.Header.Set("MCP-Protocol-Version", r.Header.Get("MCP-Protocol-Version"))
			ping.Header.Set("Mcp-Session-Id", id)
			ping.Header.Set("Content-Type", "application/json")
			ping.Header.Set("Accept", "application/json, text/event-stream")
			asSessionUser(next, user, ping).ServeHTTP(discard{}, ping)
		}
	})
}

// victim returns the session to close for the new session id, under
// c.mu: the least recently used idle one of the user who holds the most
// sessions, so that with OAuth a caller who opens sessions by the
// thousand closes its own, not everyone else's. Without OAuth every
// session is the one user's, and it is the least recently used of all.
func (c *sessionCap) victim(id string) string {
	held := map[string]int{}
	for _, u := range c.live {
		held[u.user]++
	}
	oldest := ""
	better := func(sid string, u *sessionUse) bool {
		if oldest == "" {
			return true
		}
		o := c.live[oldest]
		if held[u.user] != held[o.user] {
			return held[u.user] > held[o.user]
		}
		return u.last < o.last
	}
	for sid, u := range c.live {
		if sid != id && u.active == 0 && better(sid, u) {
			oldest = sid
		}
	}
	return oldest
}

// sessionVictim is a session the cap closes, and its OAuth user.
type sessionVictim struct{ id, user string }

// discard is the ResponseWriter of the cap's own DELETEs.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
