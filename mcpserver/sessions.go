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
// a legacy revision costs about 10 KiB (a goroutine in go-sdk, and one
// that watches it for the session path, sessdirect.go), and at most about
// 47 KiB however its client fills its initialize and its requests
// (slimSession, releaseLast; BENCHMARKS.md), so the cap bounds that
// memory near 47 MiB; the idle timeout frees what a client forgot,
// and a client that comes back after it gets 404, on which MCP has it
// start a new session.
const (
	DefaultMaxSessions        = 1000
	DefaultSessionIdleTimeout = 30 * time.Minute
)

// sessionCap keeps at most max MCP sessions of go-sdk's stateful handler
// live: when a new one makes more, it closes the least recently used
// session that has no request in flight. It also closes a session idle
// for the idle timeout, as go-sdk's own (StreamableHTTPOptions.
// SessionTimeout) would: counted from the end of the session's last POST,
// paused while one is in flight. The timeout is the cap's, not go-sdk's,
// because the session path (sessdirect.go) answers calls that go-sdk does
// not see, and that must keep a session alive all the same. go-sdk v1.8.0
// has no cap, so the cap watches the session IDs of the requests that
// pass. Waits for go-sdk: a cap on its sessions, and a way to close one,
// which would also retire the DELETE made as the session's user (see
// opened).
type sessionCap struct {
	next http.Handler
	max  int           // <= 0: no cap
	idle time.Duration // <= 0: no idle timeout
	// path answers the plain calls of a session itself; nil: go-sdk
	// answers every request.
	path *sessionPath
	// ending is called with a session's ID as it is closed (by the cap,
	// its idle timeout or its client's DELETE), before go-sdk's close,
	// which waits for its handlers: asker.endSession. nil: none.
	ending func(id string)

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
	// timer closes the session when it has been idle for the timeout,
	// at idleAt; nil until its first POST ends.
	timer  *time.Timer
	idleAt time.Time
	// path is what the session path knows of the session.
	path sessionState
}

func newSessionCap(next http.Handler, max int, idle time.Duration, path *sessionPath, ending func(id string)) *sessionCap {
	return &sessionCap{next: next, max: max, idle: idle, path: path, ending: ending, live: map[string]*sessionUse{}}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method == http.MethodPost && c.allBusy() {
			httpjson.Error(w, http.StatusServiceUnavailable, fmt.Sprintf("all %d MCP sessions have a request in flight; retry later", c.max))
			return
		}
		ow := &openWriter{ResponseWriter: w, c: c, user: userOf(r)}
		c.next.ServeHTTP(ow, r)
		if ow.id != "" {
			c.settle(ow.id) // the opening POST has ended
		}
		return
	}
	post := r.Method == http.MethodPost
	// A DELETE that go-sdk will honour, of the session's own user: go-sdk
	// refuses another user's (403), and the session lives on.
	deleting := r.Method == http.MethodDelete && c.ownedBy(id, userOf(r))
	u := c.begin(id, post, deleting)
	defer c.end(id, post, deleting)
	if deleting && c.ending != nil {
		c.ending(id) // go-sdk's close waits for the session's handlers
	}
	if post && u != nil && c.path != nil {
		c.path.serve(c, u, id, w, r) // on the path, or through c.next
		return
	}
	c.next.ServeHTTP(w, r)
}

// ownedBy reports whether the session id is one the cap knows, of user.
func (c *sessionCap) ownedBy(id, user string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.live[id]
	return ok && u.user == user
}

// userOf is the OAuth user of r, as go-sdk reads it to bind a session to
// its user, or "".
func userOf(r *http.Request) string {
	if info := sdkauth.TokenInfoFromContext(r.Context()); info != nil {
		return info.UserID
	}
	return ""
}

// openWriter records the session that go-sdk names in a response's
// header as the header goes out: before its client can know the ID, so
// that the cap counts every request of the session.
type openWriter struct {
	http.ResponseWriter
	c    *sessionCap
	user string // the OAuth user of the request, or ""
	sent bool
	id   string // the session the response opened, or ""
}

func (w *openWriter) note() {
	if !w.sent {
		w.sent = true
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			w.id = id
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
	if c.max <= 0 {
		return false
	}
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

// begin counts a request of the session id, and returns the session, or
// nil for an ID the cap does not know (go-sdk answers 404).
func (c *sessionCap) begin(id string, post, deleting bool) *sessionUse {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.live[id]
	if !ok {
		return nil
	}
	c.clock++
	u.last = c.clock
	if post {
		u.active++
		if u.timer != nil {
			u.timer.Stop() // a POST in flight pauses the idle timeout
		}
	}
	if deleting {
		u.path.gone = true // no call is answered beside go-sdk from now on
	}
	return u
}

func (c *sessionCap) end(id string, post, deleted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.live[id]; ok {
		if post && u.active > 0 {
			u.active--
			if u.active == 0 {
				c.arm(id, u)
			}
		}
		if deleted {
			c.drop(id, u)
		}
	}
}

// settle starts the idle timeout of a new session once the POST that
// opened it has ended, as go-sdk's starts it.
func (c *sessionCap) settle(id string) {
	c.mu.Lock()
	u, ok := c.live[id]
	if ok && u.active == 0 {
		c.arm(id, u)
	}
	c.mu.Unlock()
	if ok && c.path != nil {
		c.path.session(c, u, id) // and forget it when go-sdk closes it
	}
}

// arm (re)starts the idle timeout of the session, under c.mu.
func (c *sessionCap) arm(id string, u *sessionUse) {
	if c.idle <= 0 {
		return
	}
	u.idleAt = time.Now().Add(c.idle)
	if u.timer == nil {
		u.timer = time.AfterFunc(c.idle, func() { c.expire(id, u) })
	} else {
		u.timer.Reset(c.idle)
	}
}

// expire closes the session if it is still idle: a POST that began after
// the timer fired, or a timeout restarted since, leaves it open.
func (c *sessionCap) expire(id string, u *sessionUse) {
	c.mu.Lock()
	if c.live[id] != u || u.active > 0 || time.Now().Before(u.idleAt) {
		c.mu.Unlock()
		return
	}
	c.drop(id, u)
	c.mu.Unlock()
	c.close(&sessionVictim{id, u.user})
}

// drop forgets a session that is closed or closing, under c.mu.
func (c *sessionCap) drop(id string, u *sessionUse) {
	delete(c.live, id)
	u.path.gone = true
	if u.timer != nil {
		u.timer.Stop()
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
	for c.max > 0 && len(c.live) > c.max {
		oldest := c.victim(id)
		if oldest == "" {
			break // every other session is busy: none is closed mid-call
		}
		victims = append(victims, &sessionVictim{oldest, c.live[oldest].user})
		c.drop(oldest, c.live[oldest])
	}
	c.mu.Unlock()
	// Closed beside the request that opened the new session: go-sdk's
	// close waits for the victim's handlers, and a handler may outlive
	// its POST (its client gone, a slow tool), which the new session's
	// initialize must not wait for.
	for _, v := range victims {
		go c.close(v)
	}
}

// close closes a session as its client would, with a DELETE to go-sdk's
// handler.
func (c *sessionCap) close(v *sessionVictim) {
	r, err := http.NewRequest(http.MethodDelete, "/mcp", nil)
	if err != nil {
		return // a constant URL: cannot happen
	}
	r.Header.Set("Mcp-Session-Id", v.id)
	if c.ending != nil {
		c.ending(v.id)
	}
	asSessionUser(c.next, v.user, r).ServeHTTP(discard{}, r)
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
