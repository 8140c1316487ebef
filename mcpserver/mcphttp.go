package mcpserver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
)

// HTTPOptions configure MCP over Streamable HTTP.
type HTTPOptions struct {
	// OAuth, if set, guards the endpoint with OAuth access tokens that it
	// verifies (oauth.Verifier.Middleware), and each caller sees and calls
	// only the tools whose scopes its token holds (see oauth.go).
	OAuth *oauth.Verifier
	// Stateless serves MCP without sessions, for replicas behind a load
	// balancer that does not route a session to its replica. Without it,
	// the endpoint serves 2026-07-28 requests statelessly and gives
	// clients of the earlier revisions sessions, on the same URL. With
	// it, legacy clients are served too, each request on its own, and
	// receive list_changed only while a request of theirs is in flight;
	// 2026-07-28 clients receive it on subscriptions/listen either way.
	Stateless bool
	Logger    *slog.Logger
	// MaxSessions caps the live MCP sessions of the legacy revisions
	// (2026-07-28 has none): a new session beyond it closes the least
	// recently used one that has no request in flight, and when every one
	// has, initialize gets 503. 0 means DefaultMaxSessions; negative, no
	// cap.
	MaxSessions int
	// SessionIdleTimeout closes a session that has had no request for
	// that long; its client's next request gets 404, on which MCP has it
	// start a new session. 0 means DefaultSessionIdleTimeout; negative,
	// never.
	SessionIdleTimeout time.Duration
	// SSEPollAfter, if positive, makes the streams of legacy sessions
	// resumable, and closes, once, the SSE stream of a 2025-11-25 tools/call
	// still running after this long, with the retry hint SSEPollRetry
	// (0 means DefaultSSEPollRetry); the client resumes it with GET and
	// Last-Event-ID and gets the result there (SEP-1699; see ssepoll.go).
	// The events are kept in this process, at most SSEStoreBytes of them:
	// behind a load balancer, sessions must stick to their replica, as they
	// must anyway. Not with Stateless, which has no sessions to resume.
	// The closing is a middleware of the mcp.Server: serve one server
	// through one handler with it, as a second handler without it has no
	// store to resume from.
	SSEPollAfter, SSEPollRetry time.Duration
	// MaxStreams caps the notification streams open at once (a 2026-07-28
	// subscriptions/listen, a legacy session's GET), and MaxCallerStreams
	// those of one caller (its OAuth subject, or its IP address): past
	// either, a new one gets 429 (see streams.go). Keep MaxStreams well
	// below the server's connection cap. StreamWriteTimeout bounds each
	// write to a stream, so that a client that stops reading is dropped.
	// 0 means DefaultMaxStreams, DefaultMaxCallerStreams and
	// DefaultStreamWriteTimeout; negative, no bound.
	MaxStreams, MaxCallerStreams int
	StreamWriteTimeout           time.Duration
	// Tasks serves tasks/get, tasks/update and tasks/cancel of MCP's Tasks
	// extension: the Manager of Options.Tasks (see tasks.go).
	Tasks *tasks.Manager

	// noDirect turns the direct path (direct.go) off: the tests' go-sdk
	// side of the comparison.
	noDirect bool
}

// NewHTTPHandler serves srv, the MCP server of rt, over Streamable HTTP:
// every revision on the one URL (see mcpEndpoint), with the POST bodies
// that repeat a key refused (mcpdup.go), and with OAuth when opts say so.
// Package httpapi mounts it at /mcp, behind its Origin checks and bearer
// token.
func NewHTTPHandler(rt *runtime.Runtime, srv *Server, opts HTTPOptions) http.Handler {
	h, _ := newHTTPHandler(rt, srv, opts)
	return h
}

// newHTTPHandler is NewHTTPHandler, and its endpoint for the tests.
func newHTTPHandler(rt *runtime.Runtime, srv *Server, opts HTTPOptions) (http.Handler, *mcpEndpoint) {
	// An ambiguous body is refused before anything reads it, and every
	// check after reads it as go-sdk will (message.go): one reading of the
	// request, the one go-sdk dispatches.
	e := newMCPEndpoint(rt, srv, opts)
	var h http.Handler = newStreamGuard(e, opts)
	if v := opts.OAuth; v != nil {
		// The token first: a request without one costs no body read.
		return v.Middleware(tokenInfo(v)(rejectAmbiguous(scopeCheck(rt, v, h)))), e
	}
	return rejectAmbiguous(h), e
}

// modernRevision is the first MCP revision without sessions (SEP-2575).
// Revision names are dates, so they order as strings.
const modernRevision = "2026-07-28"

// maxMCPBody bounds an MCP request body, as go-sdk's own default does; the
// router reads a body only to find the revision of a request that names
// none in its header.
const maxMCPBody = mcp.DefaultMaxRequestBodyBytes

// mcpEndpoint serves every MCP revision on one URL. go-sdk v1.8.0 speaks
// 2026-07-28 over HTTP only in its stateless mode, and keeps sessions only
// in its stateful mode, so the endpoint holds one handler of each over the
// same mcp.Server and sends each request to the one its revision needs:
//
//   - MCP-Protocol-Version naming a revision go-sdk does not speak: 400
//     with UnsupportedProtocolVersion (-32022) listing the ones it does,
//     the error of 2026-07-28, which clients of every revision read as a
//     400.
//   - MCP-Protocol-Version 2026-07-28, or, without that header, a
//     body whose _meta names a protocolVersion (a 2026-07-28 request that
//     forgot the header): stateless. go-sdk answers it, or rejects a
//     missing header with HeaderMismatch and an unknown revision with
//     UnsupportedProtocolVersion.
//   - a legacy request for a method no revision defines: -32601, which
//     go-sdk's session handler would answer with a plain-text 400.
//   - anything else (initialize, requests of a session, GET and DELETE of
//     legacy streams, and requests without the header, which the spec lets
//     a server read as 2025-03-26): stateful, with sessions.
//
// The tool list, its list_changed notifications and the handlers are the
// server's, so legacy sessions and 2026-07-28 listen streams see the same
// swaps. Waits for go-sdk: one HTTP handler that serves every revision,
// sessions for the legacy ones and none for 2026-07-28.
type mcpEndpoint struct {
	rt        *runtime.Runtime // for the x-mcp-header fields of the tool called
	sessions  http.Handler     // stateful: the legacy revisions
	stateless http.Handler     // 2026-07-28, and every request with Stateless
	versions  []string         // the revisions the server speaks, newest first
	only      bool             // HTTPOptions.Stateless: no sessions at all
	tasks     *tasks.Manager   // nil: no tasks/* methods
	direct    *directPath      // nil when HTTPOptions.noDirect
	// sessionCap watches the legacy sessions (sessions.go), and answers
	// their plain calls on the session path (sessdirect.go); nil without
	// sessions, or with neither a cap, an idle timeout nor the path.
	sessionCap *sessionCap
}

func newMCPEndpoint(rt *runtime.Runtime, server *Server, opts HTTPOptions) *mcpEndpoint {
	srv := server.Server
	getServer := func(*http.Request) *mcp.Server { return srv }
	// A 2026-07-28 call of a tool hidden from its caller goes to a server
	// without tools, which answers it as srv answers a tool it does not
	// have: go-sdk checks such a call's Mcp-Param-* headers against the
	// tool it finds, before any middleware, so srv would refuse bad
	// headers for a hidden tool where it lets them through for an
	// unknown one, and tell the caller the tool exists. Waits for go-sdk:
	// the header check after the receiving middleware, or a tool list
	// per caller.
	blank := mcp.NewServer(&mcp.Implementation{Name: "toolc"}, &mcp.ServerOptions{
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
	})
	blank.AddReceivingMiddleware(rejectUnserved(rt, newEntries(rt, nil, ""), Features{}, false), auditHidden(rt))
	statelessServer := func(r *http.Request) *mcp.Server {
		if r.Context().Value(hiddenCallKey{}) != nil {
			return blank
		}
		return srv
	}
	e := &mcpEndpoint{
		rt: rt,
		stateless: mcp.NewStreamableHTTPHandler(statelessServer, &mcp.StreamableHTTPOptions{
			Stateless: true,
			Logger:    opts.Logger,
			// A 2026-07-28 request lives as long as its POST: when the
			// client goes away, so does the call.
			PropagateRequestCancellation: true,
		}),
		versions: mcp.SupportedProtocolVersions(),
		only:     opts.Stateless,
		tasks:    opts.Tasks,
	}
	if !opts.noDirect {
		e.direct = &directPath{srv: server, rt: rt, stateless: e.stateless, oauth: opts.OAuth != nil}
	}
	if !opts.Stateless {
		// The idle timeout is the cap's (see sessionCap), not go-sdk's.
		idle := max(cmp.Or(opts.SessionIdleTimeout, DefaultSessionIdleTimeout), 0)
		statefulOpts := &mcp.StreamableHTTPOptions{Logger: opts.Logger}
		if opts.SSEPollAfter > 0 {
			statefulOpts.EventStore = newEventStore()
			srv.AddReceivingMiddleware(ssePoll(opts.SSEPollAfter, cmp.Or(opts.SSEPollRetry, DefaultSSEPollRetry)))
		}
		stateful := releaseLast(mcp.NewStreamableHTTPHandler(getServer, statefulOpts))
		var path *sessionPath
		if e.direct != nil && statefulOpts.EventStore == nil {
			path = &sessionPath{d: e.direct} // see sessdirect.go
		}
		// The cap stands in front of go-sdk even with no limit and no
		// idle timeout: it is what gives up a session's questions when
		// its client's DELETE closes it, since go-sdk's close waits for
		// the handlers that wait for the answers. Its entry for a session
		// lives as long as go-sdk's session does.
		maxSessions := cmp.Or(opts.MaxSessions, DefaultMaxSessions)
		e.sessionCap = newSessionCap(stateful, maxSessions, idle, path, server.tools.ask.endSession)
		e.sessions = e.sessionCap
	}
	return e
}

func (e *mcpEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	version := r.Header.Get("MCP-Protocol-Version")
	switch {
	case version != "" && !slices.Contains(e.versions, version):
		e.unsupported(w, r, version)
	case e.only || version >= modernRevision:
		if version == modernRevision && e.direct != nil && e.direct.serve(w, r) {
			return // see direct.go
		}
		// A legacy request's headers, if it has any, are checked by the
		// handler alone: its revision does not promise them.
		if bad := e.badParamHeader(r); bad != "" && version >= modernRevision {
			e.reject(w, r, http.StatusBadRequest, mcp.CodeHeaderMismatch, bad, nil)
			return
		}
		if version >= modernRevision && (e.serveTasks(w, r) || e.listenTasks(w, r)) {
			return
		}
		e.stateless.ServeHTTP(w, r)
	case r.Method == http.MethodPost:
		// A legacy POST, or a 2026-07-28 one without its header.
		msg, ok := e.peek(w, r)
		switch {
		case !ok:
		case version == "" && r.Header.Get("Mcp-Session-Id") == "" && msg.modern():
			if e.serveTasks(w, r) || e.listenTasks(w, r) {
				return
			}
			e.stateless.ServeHTTP(w, r)
		case msg.unknown():
			// go-sdk answers an undefined method in a session with a
			// plain-text 400; the legacy revisions say -32601. Waits for
			// go-sdk: -32601 from its session handler.
			e.reject(w, r, http.StatusOK, jsonrpc.CodeMethodNotFound, "method "+runtime.QuoteName(msg.Method)+" not found", nil)
		default:
			if e.slim(w, r) {
				e.sessions.ServeHTTP(w, r)
			}
		}
	default:
		e.sessions.ServeHTTP(w, r)
	}
}

// slim hands go-sdk's session handler what a session needs to keep of
// the requests that set its state, and no more (slimSession); it answers
// params past the bounds itself, and then reports false.
func (e *mcpEndpoint) slim(w http.ResponseWriter, r *http.Request) bool {
	b, ok := r.Body.(*mcpBody)
	if !ok {
		return true
	}
	msgs, _, _ := b.messages()
	out, problem := slimSession(b.data, msgs)
	if problem != "" {
		e.reject(w, r, http.StatusBadRequest, jsonrpc.CodeInvalidParams, problem, nil)
		return false
	}
	if len(out) != len(b.data) || !bytes.Equal(out, b.data) {
		r.Body = &mcpBody{Reader: bytes.NewReader(out), data: out}
	}
	return true
}

// peeked is what the router reads of a POST body: its one JSON-RPC
// request, as go-sdk reads it, or nil (a batch, a response, or no
// message: go-sdk answers those).
type peeked struct{ *jsonrpc.Request }

// modern reports a request whose _meta names a protocolVersion, the mark of
// 2026-07-28.
func (m *peeked) modern() bool {
	if m == nil {
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m.Params, &params) != nil || json.Unmarshal(params["_meta"], &p.Meta) != nil {
		return false
	}
	_, ok := p.Meta[mcp.MetaKeyProtocolVersion]
	return ok
}

// unknown reports a request for a method that go-sdk's server does not
// receive: not a notification, and not a response (no method), which a
// client sends to answer the server's own requests in a session.
func (m *peeked) unknown() bool {
	return m != nil && m.Method != "" && m.IsCall() && !serverMethods[m.Method]
}

// serverMethods are the request methods go-sdk v1.8.0's server receives
// (its serverMethodInfos). Its stateful handler answers any other request
// with a plain-text 400 before a middleware sees it; the ones toolc does
// not serve among these are answered by rejectUnserved.
var serverMethods = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true, "completion/complete": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"server/discover": true, "subscriptions/listen": true,
	// The Skills extension's, which toolc registers as custom methods.
	methodListSkills: true, methodGetSkill: true, methodReadDir: true,
}

// peek returns the request in a POST body (read once, by readMCPBody),
// or nil when it is no single JSON-RPC request. A body over the bound is
// answered 413, and ok is false.
func (e *mcpEndpoint) peek(w http.ResponseWriter, r *http.Request) (msg *peeked, ok bool) {
	if _, ok := readMCPBody(w, r); !ok {
		return nil, false
	}
	msgs, batch, ok := r.Body.(*mcpBody).messages()
	if !ok || batch {
		return nil, true
	}
	if req, isReq := msgs[0].(*jsonrpc.Request); isReq {
		return &peeked{req}, true
	}
	return nil, true
}

// badParamHeader checks the Mcp-Param-* headers of a 2026-07-28
// tools/call (SEP-2243) before go-sdk serves it, and says what is wrong,
// or "": so that a mismatch is a 400, as go-sdk answers the mismatches it
// finds, whatever the spelling of the arguments (see paramheaders.go). It
// reads the call as go-sdk will dispatch it, and its arguments as the
// runtime will hand them to the handler; the handler's own check
// (runtime.ArgumentCheck) still holds the call that runs, should a reload
// come between the two.
func (e *mcpEndpoint) badParamHeader(r *http.Request) string {
	m := single(r) // every POST passed rejectAmbiguous
	if m == nil {
		return "" // go-sdk refuses a batch, or no message, in 2026-07-28
	}
	p, ok := callParams(m)
	if !ok {
		return ""
	}
	snap := e.rt.Snapshot()
	t, ok := snap.ByMCPName(p.Name)
	if !ok || runtime.AccessTo(oauth.CallerFrom(r.Context()), t) == runtime.Hidden {
		return "" // go-sdk answers an unknown name, and a hidden one as unknown
	}
	given, valid, err := snap.Arguments(p.Name, p.Arguments)
	if err != nil {
		return "" // the call's tool error says what is wrong with them; no handler runs
	}
	return paramHeaderProblem(r.Header, t, given, valid, true)
}

// unsupported answers a request whose MCP-Protocol-Version header names a
// revision the server does not speak: 400 and UnsupportedProtocolVersion.
func (e *mcpEndpoint) unsupported(w http.ResponseWriter, r *http.Request, version string) {
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: e.versions, Requested: version})
	e.reject(w, r, http.StatusBadRequest, mcp.CodeUnsupportedProtocolVersion,
		fmt.Sprintf("protocol version %q is not supported; this server speaks %s", version, strings.Join(e.versions, ", ")), data)
}

// reject answers a request with a JSON-RPC error, with the request's id
// when its body has one.
func (e *mcpEndpoint) reject(w http.ResponseWriter, r *http.Request, status, code int, message string, data json.RawMessage) {
	// Every POST reaches the endpoint through rejectAmbiguous, which
	// read its body.
	var id json.RawMessage
	if b, ok := r.Body.(*mcpBody); ok {
		id = idOf(b.data)
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{Code: code, Message: message, Data: data}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(resp)
}
