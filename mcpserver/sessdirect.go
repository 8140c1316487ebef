package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync/atomic"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/jsondepth"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// The session path: direct.go's path for the calls of a legacy session
// (2025-11-25 and before, over Streamable HTTP). go-sdk v1.8.0 serves a
// session's POST through its jsonrpc2 connection: the request is queued
// to the session's reader, handled on a goroutine of its own, and its
// answer handed back through the session's stream to the goroutine that
// waits on the POST, with go-sdk's decoder (a 32 KiB buffer per message)
// and its generic dispatch on the way. Profiles of a plain tools/call at
// one and eight clients put go-sdk's share near half of the server's
// CPU, most of it in the hand-offs and in the collector (BENCHMARKS.md,
// issue 27). The path answers a plain tools/call of a live session on the
// POST's own goroutine instead, with what go-sdk's answer is made of: the
// same tool handler (mcpTools.callTool) given the session itself, the
// result amended as go-sdk amends it (an empty content list), encoded with
// go-sdk's encoder, and framed as the session's stream frames it (one SSE
// event, no ID without an event store). A plain tools/list (no cursor, no
// _meta) is go-sdk's answer, kept once go-sdk has made it in a session of
// the same revision, for as long as the tools are the same generation.
//
// What a session's answer depends on beyond the request is go-sdk's
// unexported state, so the path follows it from outside, and answers only
// what it can answer exactly:
//
//   - the session is live: the cap (sessions.go) knows it, go-sdk has it
//     (Server.Sessions), and it is not closing (no DELETE seen, not
//     closed for idleness or by the cap, and ServerSession.Wait has not
//     returned). The idle timeout is the cap's, so that a call on the path
//     keeps the session alive as one through go-sdk would.
//   - initialize has been handled (go-sdk answers calls from then on), at
//     a revision before 2026-07-28. A question goes out on the call's own
//     stream, and only go-sdk can route its answer back: a handler that
//     asks one ends the call on the path before anything is written, and
//     go-sdk serves the call from the start. Its first round runs again,
//     as every round of a Go handler that asks runs again (package
//     plugins): its questions are its result, not a wait. Not so the
//     upstream bridge's, which parks the upstream server's own call
//     between rounds: a call of an upstream tool is on the path only for
//     a client that declared no capability a question needs
//     (elicitation, sampling, roots), whom the bridge asks nothing
//     (it returns MissingCapability, as the plugin SDK does).
//   - no logging/setLevel was seen (a log level makes a handler's log
//     lines go out); the request has no _meta (no progress token);
//   - no call with the same ID is in flight at go-sdk (which answers
//     that one with its duplicate error); one in flight on the path gets
//     the same error from the path, and a request to go-sdk that carries
//     the ID of a call on the path waits for it to end, as if it had come
//     later.
//   - notifications/cancelled of a call on the path cancels it, as go-sdk
//     cancels the calls it runs.
//
// With OAuth, the path takes a call of the session's own user (go-sdk
// answers anyone else 403) of a tool the token holds every scope of, with
// scopeFilter's audit line, and leaves lists, which are each caller's
// own, to go-sdk. No event store (SSEPollAfter), tracing or middleware
// added after New: with any of these there is no session path.
// TestSessionPathIsGoSDK and FuzzSessionPath hold the two to the same
// bytes, and TestSessionPathWithOAuth the answers to OAuth callers and
// their audit lines. Waits for go-sdk: a session's calls served without
// the hand-offs.

// sessionPath answers the plain calls of legacy sessions.
type sessionPath struct {
	d *directPath // the checks of the server and the tools it shares
	// lists are go-sdk's last tools/list results in sessions, by
	// revision (listRevision): an immutable map, replaced whole.
	lists atomic.Pointer[map[string]*sessionList]
	// answered counts the requests the path answered, for the tests.
	answered atomic.Uint64
}

// sessionList is go-sdk's answer to a plain tools/list in a session: the
// same in every session of one revision without OAuth, and kept for one
// generation of the tools (mcpTools.gen), as direct.go keeps the
// 2026-07-28 one.
type sessionList struct {
	gen uint64
	// revision is the session's initialize revision and the request's
	// MCP-Protocol-Version, either of which go-sdk's answer may follow.
	revision string
	result   json.RawMessage
}

// listRevision is the revision of a sessionList for a request r in ss.
func listRevision(ss *mcp.ServerSession, r *http.Request) string {
	return ss.InitializeParams().ProtocolVersion + " " + r.Header.Get("MCP-Protocol-Version")
}

// sessionState is what the path knows of one session, under the cap's
// lock (sessionUse.path).
type sessionState struct {
	ss     *mcp.ServerSession // go-sdk's session, once found
	looked bool               // looked for it
	// gone: the session is closed or closing, or not go-sdk's.
	gone bool
	// leveled: the client set a log level.
	leveled bool
	// direct are the calls in flight on the path; sdk counts those in
	// flight at go-sdk, by ID.
	direct map[jsonrpc.ID]*sessionCall
	sdk    map[jsonrpc.ID]int
}

// sessionCall is a call in flight on the path.
type sessionCall struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// serve answers r, a POST of the session id: on the path when it can,
// else through go-sdk (c.next).
func (p *sessionPath) serve(c *sessionCap, u *sessionUse, id string, w http.ResponseWriter, r *http.Request) {
	msgs := bodyMessages(r)
	q, ok := p.accept(r, single(r))
	var ss *mcp.ServerSession
	if ok {
		ss = p.session(c, u, id)
		// A list runs no handler; a call may run its first round twice
		// (see replayable).
		ok = ss != nil && initialized(ss) && (q.req.Method == "tools/list" || asksNothing(ss) || p.d.replayable(q.params.Name))
	}
	c.mu.Lock()
	st := &u.path
	p.observe(st, msgs)
	// go-sdk serves a session of an OAuth user to that user alone, and
	// answers anyone else 403.
	if ok && (st.gone || st.leveled || st.sdk[q.req.ID] > 0 || u.user != "" && userOf(r) != u.user) {
		ok = false
	}
	if ok {
		if st.direct[q.req.ID] != nil {
			c.mu.Unlock()
			p.answered.Add(1)
			duplicate(w, q.req.ID)
			return
		}
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		call := &sessionCall{cancel: cancel, done: make(chan struct{})}
		if st.direct == nil {
			st.direct = map[jsonrpc.ID]*sessionCall{}
		}
		st.direct[q.req.ID] = call
		c.mu.Unlock()
		answered := p.call(ctx, w, r, ss, q)
		cancel()
		c.mu.Lock()
		delete(st.direct, q.req.ID)
		if answered {
			c.mu.Unlock()
			close(call.done)
			return
		}
		// The handler asked the client a question: go-sdk serves the call
		// from the start. The ID passes to go-sdk's calls in flight before
		// any request that waits for it goes on. Or the list is not kept:
		// go-sdk makes it, and the path keeps it.
		defer close(call.done)
		if q.req.Method == "tools/list" {
			rec := &listRecorder{ResponseWriter: w}
			gen := p.d.srv.tools.gen.Load() // before go-sdk makes it: see direct.go's toolList
			revision := listRevision(ss, r)
			w = rec
			defer func() {
				if result, ok := sseResult(rec.status, rec.Header(), rec.body.Bytes()); ok && !rec.over {
					p.keep(&sessionList{gen: gen, revision: revision, result: result})
				}
			}()
		}
	}
	// go-sdk's. A call whose ID is in flight on the path waits for it.
	ids := callIDs(msgs)
	for {
		var wait chan struct{}
		for _, id := range ids {
			if call := st.direct[id]; call != nil {
				wait = call.done
				break
			}
		}
		if wait == nil {
			break
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-r.Context().Done():
		}
		c.mu.Lock()
		if r.Context().Err() != nil {
			break // go-sdk answers a request whose client left as it will
		}
	}
	if len(ids) > 0 && st.sdk == nil {
		st.sdk = map[jsonrpc.ID]int{}
	}
	for _, id := range ids {
		st.sdk[id]++
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		for _, id := range ids {
			if st.sdk[id]--; st.sdk[id] <= 0 {
				delete(st.sdk, id)
			}
		}
		c.mu.Unlock()
	}()
	c.next.ServeHTTP(w, r)
}

// bodyMessages are the messages of r's body as go-sdk reads them, or nil.
func bodyMessages(r *http.Request) []jsonrpc.Message {
	b, ok := r.Body.(*mcpBody)
	if !ok {
		return nil
	}
	msgs, _, ok := b.messages()
	if !ok {
		return nil
	}
	return msgs
}

// callIDs are the IDs of the calls among msgs.
func callIDs(msgs []jsonrpc.Message) []jsonrpc.ID {
	var ids []jsonrpc.ID
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			ids = append(ids, req.ID)
		}
	}
	return ids
}

// observe notes, under the cap's lock, what the messages of a POST change
// of the session for the path: a log level, and the cancellation of a
// call on the path.
func (p *sessionPath) observe(st *sessionState, msgs []jsonrpc.Message) {
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		switch req.Method {
		case "logging/setLevel":
			st.leveled = true
		case "notifications/cancelled":
			// As go-sdk's canceller reads it.
			var params mcp.CancelledParams
			if _, err := fastjson.Parse(req.Params, &params, fastjson.DontMatchCaseInsensitiveStructFields); err != nil {
				continue
			}
			id, err := jsonrpc.MakeID(params.RequestID)
			if err != nil {
				continue
			}
			if call := st.direct[id]; call != nil {
				call.cancel()
			}
		}
	}
}

// accept reads r and reports whether it is a call the path answers
// exactly as go-sdk would in a session that allows it (see serve).
func (p *sessionPath) accept(r *http.Request, msg jsonrpc.Message) (directRequest, bool) {
	var q directRequest
	version := r.Header.Get("MCP-Protocol-Version")
	// Not with tracing: a call whose handler asks goes to go-sdk after its
	// first round has run, in a span that go-sdk's would duplicate.
	if version == "" || version >= modernRevision || !p.d.plainServer() || p.d.rt.Tracing() || !plainPost(r, p.d.oauth) {
		return q, false
	}
	ctx := r.Context()
	q.caller, q.token = oauth.CallerFrom(ctx), sdkauth.TokenInfoFromContext(ctx)
	if (q.caller == nil) != (q.token == nil) {
		return q, false // not as NewHTTPHandler's middleware leaves them
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != "tools/call" && req.Method != "tools/list" {
		return q, false
	}
	switch req.ID.Raw().(type) {
	case int64, string:
	default:
		return q, false
	}
	if req.Method == "tools/list" {
		// No params, or none in them: no cursor, no _meta. An OAuth
		// caller's list is its own (scopeFilter).
		q.req = req
		return q, (len(req.Params) == 0 || string(req.Params) == "{}") && q.caller == nil
	}
	if jsondepth.Of(req.Params) > maxDirectDepth {
		return q, false
	}
	var params plainParams
	if !readExactly(req.Params, &params) || params.Meta != nil {
		return q, false // _meta (a progress token), requestState, task, ...
	}
	c, ok := params.call(nil)
	if !ok || !plainName(c.Name) || !p.d.plainTool(c.Name, q.caller) {
		return q, false
	}
	q.req, q.params = req, c
	return q, true
}

// session returns go-sdk's session id, looked for once, or nil when go-sdk
// has no such session. Once found, a goroutine waits for it to close.
func (p *sessionPath) session(c *sessionCap, u *sessionUse, id string) *mcp.ServerSession {
	c.mu.Lock()
	ss, looked := u.path.ss, u.path.looked
	c.mu.Unlock()
	if looked {
		return ss
	}
	for s := range p.d.srv.Sessions() {
		if s.ID() == id {
			ss = s
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if u.path.looked { // another request looked meanwhile
		return u.path.ss
	}
	u.path.looked, u.path.ss = true, ss
	if ss == nil {
		c.gone(id, u)
		return nil
	}
	go func() {
		ss.Wait()
		c.mu.Lock()
		c.gone(id, u)
		c.mu.Unlock()
	}()
	return ss
}

// gone forgets a session that go-sdk has closed, or never kept (a failed
// initialize), under the cap's lock.
func (c *sessionCap) gone(id string, u *sessionUse) {
	u.path.gone = true
	if c.live[id] == u {
		c.drop(id, u)
	}
}

// initialized reports whether go-sdk answers calls in ss as the path
// does: initialize handled, at a legacy revision.
func initialized(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion < modernRevision
}

// asksNothing reports whether the client of ss declared no capability
// that a handler's question needs (elicitation, sampling, roots): a
// handler asks such a client nothing, and returns MissingCapability
// instead (as the plugin SDK and the upstream bridge do). A client that
// declared one is go-sdk's, whose session routes the question and its
// answer.
func asksNothing(ss *mcp.ServerSession) bool {
	caps := ss.InitializeParams().Capabilities
	return caps == nil || !caps.Roots.ListChanged && caps.RootsV2 == nil && caps.Sampling == nil && caps.Elicitation == nil
}

// replayable reports whether the tool's handler may run its first round
// twice, once on the path and once at go-sdk, for a client that can be
// asked questions: any but an upstream server's tool, whose call the
// bridge keeps open between rounds (see asksNothing).
func (d *directPath) replayable(name string) bool {
	t, ok := d.rt.Snapshot().ByMCPName(name)
	return ok && t.Service.Upstream == nil
}

// noQuestionsKey marks the context of a call on the session path: a
// handler's question to the client, which go-sdk sends on the call's own
// stream, ends the call with errWouldAsk instead (relay, mcpask.go).
type noQuestionsKey struct{}

var errWouldAsk = errors.New("the handler asks the client a question")

// call runs the call q of the session ss and answers it as go-sdk's
// session answers it, or reports false, having written nothing, when the
// handler asks the client a question: go-sdk serves such a call (its
// first round runs again there).
func (p *sessionPath) call(ctx context.Context, w http.ResponseWriter, r *http.Request, ss *mcp.ServerSession, q directRequest) bool {
	if q.req.Method == "tools/list" {
		var l *sessionList
		if m := p.lists.Load(); m != nil {
			l = (*m)[listRevision(ss, r)]
		}
		if l == nil || l.gen != p.d.srv.tools.gen.Load() {
			return false // go-sdk makes it, and serve keeps it
		}
		p.answered.Add(1)
		writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Result: l.result})
		return true
	}
	// The handler reads the client's capabilities from the session, as on
	// go-sdk's path.
	req := &mcp.CallToolRequest{Session: ss, Params: q.params, Extra: &mcp.RequestExtra{Header: r.Header, TokenInfo: q.token}}
	// No progress token and no log level: go-sdk sends nothing else for
	// this request, and nor does the path.
	start := time.Now()
	res, err := p.d.srv.tools.callTool(context.WithValue(ctx, noQuestionsKey{}, true), q.params.Name, req, func(runtime.Event) {})
	if errors.Is(err, errWouldAsk) {
		return false // go-sdk runs it, and scopeFilter writes its audit line
	}
	p.d.rt.Audit(q.caller, q.params.Name, callOutcome(res, err), time.Since(start), q.params.Arguments)
	p.answered.Add(1) // before the answer, which the client may act on
	switch {
	case err != nil:
		writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Error: err})
		return true
	case res == nil:
		writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Result: json.RawMessage("null")})
		return true
	}
	out, err := sdkCallResult(res, nil) // a legacy session's form
	if err != nil {
		writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Error: err})
		return true
	}
	data, err := out.MarshalJSON()
	if err != nil {
		writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Error: err})
		return true
	}
	writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Result: data})
	return true
}

// duplicate answers a call whose ID is in flight in the session, as
// go-sdk's session does: the stream's headers, then a JSON error.
func duplicate(w http.ResponseWriter, id jsonrpc.ID) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw()),
	}})
	if err == nil {
		w.Write(data)
	}
}

// listRecorder passes go-sdk's answer to a session's tools/list through,
// and keeps a copy for the path, up to maxKeptList bytes.
type listRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	over   bool
}

// maxKeptList bounds the tools/list answer the path keeps.
const maxKeptList = 4 << 20

func (w *listRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *listRecorder) Write(p []byte) (int, error) {
	if w.body.Len()+len(p) > maxKeptList {
		w.over = true
	} else if !w.over {
		w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap gives http.ResponseController, which go-sdk flushes with, the
// writer underneath.
func (w *listRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// maxKeptLists bounds the revisions whose lists the path keeps: a client
// names its initialize's revision as it likes.
const maxKeptLists = 8

// keep keeps l, in place of the list of its revision.
func (p *sessionPath) keep(l *sessionList) {
	for {
		old := p.lists.Load()
		m := map[string]*sessionList{}
		if old != nil && len(*old) < maxKeptLists {
			maps.Copy(m, *old)
		}
		m[l.revision] = l
		if p.lists.CompareAndSwap(old, &m) {
			return
		}
	}
}
