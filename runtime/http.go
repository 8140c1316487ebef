package runtime

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/validate"
)

// HTTPOptions configures the HTTP server.
type HTTPOptions struct {
	// Token, if set, is the bearer token that /mcp and /v1/ require.
	Token string
	// OAuth, if set, makes the server an OAuth resource server in place
	// of Token (set one or neither): /mcp and /v1/ take access tokens that
	// OAuth verifies, each caller sees and calls only the tools whose
	// scopes its token holds, and the resource's metadata is served at
	// /.well-known/oauth-protected-resource (see runtime/oauth.go).
	OAuth *oauth.Verifier
	// AllowedOrigins lists browser origins ("http://localhost:6274") that
	// may call the server besides its own. Any other Origin gets 403.
	AllowedOrigins []string
	// Stateless serves MCP without sessions, for replicas behind a load
	// balancer that does not route a session to its replica. Without it,
	// /mcp serves 2026-07-28 requests statelessly and gives clients of
	// the earlier revisions sessions, on the same URL. With it, legacy
	// clients are served too, each request on its own, and receive
	// list_changed only while a request of theirs is in flight; 2026-07-28 clients receive it on subscriptions/listen
	// either way.
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
}

// NewHTTPHandler serves, on one mux: MCP over Streamable HTTP at /mcp,
// every revision on the one URL (see mcpEndpoint);
// the function-call API at GET /v1/tools and POST /v1/call; /healthz; and
// Prometheus metrics at /metrics.
func NewHTTPHandler(rt *Runtime, srv *mcp.Server, opts HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	auth := bearer(opts.Token)
	mcpAuth := auth
	// Duplicate keys are refused before anything reads the body: each
	// reader in front would otherwise pick its own of the two.
	var endpoint http.Handler = rejectDuplicateKeys(newMCPEndpoint(rt, srv, opts))
	if v := opts.OAuth; v != nil {
		// Only MCP needs go-sdk's TokenInfo; /v1/ and /metrics read the
		// caller that v.Middleware put in the context, and skip the
		// second parse of the header and the TokenInfo made per request.
		auth, mcpAuth = v.Middleware, oauthGuard(v)
		endpoint = rt.mcpScopeCheck(v, endpoint)
		meta := v.MetadataHandler(func() []string { return CatalogScopes(rt.Snapshot().Catalog) })
		mux.Handle("GET "+oauth.MetadataPath, meta)
		mux.Handle("GET "+oauth.MetadataPath+"/mcp", meta)
	}
	mux.Handle("/mcp", mcpAuth(endpoint))
	mux.Handle("GET /v1/tools", auth(http.HandlerFunc(rt.serveTools)))
	mux.Handle("POST /v1/call", auth(rt.callHandler(newEnvelopeValidator(), opts.OAuth)))
	mux.Handle("GET /healthz", rt.healthHandler(opts.Token, opts.OAuth))
	// The metrics name every tool and count its calls: they take the
	// token too (Prometheus sends it with authorization: credentials),
	// and an OAuth caller gets those of the tools it sees.
	var metrics http.Handler = promhttp.HandlerFor(rt.metrics.registry, promhttp.HandlerOpts{})
	if opts.OAuth != nil {
		metrics = http.HandlerFunc(rt.callerMetrics)
	}
	mux.Handle("GET /metrics", auth(metrics))
	return checkOrigin(opts.AllowedOrigins, opts.Token != "" || opts.OAuth != nil, mux)
}

// Exposed reports whether a server listening on addr (host:port, as
// net.Listen takes it) can be reached from other machines: when the host
// is empty or unspecified (":8931", "0.0.0.0:8931", "[::]:8931"), an IP
// address that is not a loopback one, or a name of which any address is
// not a loopback one.
func Exposed(ctx context.Context, addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "" {
		return true, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return !ip.IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, err
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return true, nil
		}
	}
	return false, nil
}

// checkOrigin refuses a request from a browser page of another origin,
// whatever its method: a web page must not drive local tools (DNS
// rebinding and cross-site requests). Requests without an Origin header,
// from programs rather than browsers, pass. The opaque origin "null" is
// refused like any other, unless allowed: browsers send it from sandboxed
// iframes and file: pages, which any web page can open.
func checkOrigin(allowed []string, token bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := rebound(r, token); why != "" {
			writeJSONError(w, http.StatusForbidden, why)
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && !slices.Contains(allowed, origin) {
			u, err := url.Parse(origin)
			if err != nil || !sameHost(u.Host, r.Host) {
				writeJSONError(w, http.StatusForbidden, fmt.Sprintf("origin %q may not call this server; allow it with --allow-origin", origin))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// rebound says why a request looks like a page that rebound its own
// domain to this server's address, or returns "". A page that does
// reaches the server under its own name, with a matching Origin, so the
// origin check lets it through. On a loopback listener, only loopback
// names are served (go-sdk refuses the others on /mcp; this covers /v1/
// as well). On a listener others reach, the token is the defence, as a
// rebound page does not have it; without one (--insecure), only requests
// to an IP address are served, as a name is what a rebound page sends.
func rebound(r *http.Request, token bool) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	tcp, ok := local.(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	ip := net.ParseIP(host)
	switch {
	case strings.EqualFold(host, "localhost"):
		return ""
	case tcp.IP.IsLoopback() && (ip == nil || !ip.IsLoopback()):
		return fmt.Sprintf("host %q is not a loopback name, but the request arrived on a loopback address (DNS rebinding?)", r.Host)
	case !tcp.IP.IsLoopback() && !token && ip == nil:
		return fmt.Sprintf("host %q is a name, and this server has no token, so it serves requests to its IP address only (DNS rebinding?); serve it with --token to reach it by name", r.Host)
	}
	return ""
}

func sameHost(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return strings.EqualFold(a, b)
	}
	return strings.EqualFold(ha, hb) && pa == pb
}

func bearer(token string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if token == "" {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !hasToken(r, token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolc"`)
				writeJSONError(w, http.StatusUnauthorized, "missing or wrong bearer token")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hasToken reports whether r carries the bearer token, comparing in
// constant time.
func hasToken(r *http.Request, token string) bool {
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) == 1
}

func (rt *Runtime) serveTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = string(catalog.MCP)
	}
	target, err := catalog.ParseTarget(format)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return
	}
	// An OAuth caller sees only the tools its token may call; a hidden
	// tool named in ?tools= is unknown, like one that does not exist.
	cat := visibleCatalog(oauth.CallerFrom(r.Context()), rt.Snapshot().Catalog)
	if names := q.Get("tools"); names != "" {
		if cat, err = cat.SelectFor(target, strings.Split(names, ",")...); err != nil {
			writeJSONError(w, http.StatusNotFound, err.Error())
			return
		}
	}
	data, err := cat.ProjectJSON(target, catalog.ProjectOptions{Strict: q.Get("strict") == "1" || q.Get("strict") == "true"})
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// CallRequest is the body of POST /v1/call.
type CallRequest struct {
	Name string `json:"name"`
	// Arguments is an object, or a JSON string holding one.
	Arguments json.RawMessage `json:"arguments"`
}

// CallResponse is the body of a /v1/call answer: MCP's CallToolResult.
type CallResponse struct {
	Content           []mcp.Content `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError"`
}

// maxCallName bounds the name in the envelope of POST /v1/call.
const maxCallName = 256

// envelopeSlack is what the body of POST /v1/call may hold besides its
// arguments' own bytes: the name, the keys, white space.
const envelopeSlack = 64 << 10

// maxCallBody bounds the body of POST /v1/call for arguments of at most
// limit bytes. Arguments in the string form are escaped, and an escape
// takes at most six bytes for one (\u00XX, for a control byte or, from an
// encoder that escapes HTML, for <, > and &): with six times the limit,
// any arguments within the limit fit, however the client escaped them.
// The limit itself applies to the arguments once unescaped.
func maxCallBody(limit int) int64 { return 6*int64(limit) + envelopeSlack }

// newEnvelopeValidator checks the body of POST /v1/call with the scanner
// that checks arguments, so that the envelope is read exactly as they are:
// keys case-sensitive and compared after their escapes are decoded
// ("na\u006de" is "name"), a key given twice refused, unknown keys
// refused (with the key meant, for "NAME"), nesting bounded, nothing after
// the object. encoding/json alone would match "NAME" to name and keep the
// last of two, so that a gateway that allowlists by name could be
// bypassed with {"name":"ping","NAME":"other"}.
//
// A name is at most maxCallName characters: tool and MCP names are at most
// 64, and an unknown name is quoted in the 404, which must not echo
// megabytes.
func newEnvelopeValidator() *validate.Validator {
	one, most := int64(1), int64(maxCallName)
	v, err := validate.NewValidator(&catalog.Message{Fields: []*catalog.Field{
		{Name: "name", Type: catalog.String, Required: true, MinLength: &one, MaxLength: &most, Description: "the tool to call"},
		{Name: "arguments", Type: catalog.String, Description: "an object, or a JSON string holding one"},
	}}, validate.Naming("the body", "is"), validate.RawField("arguments", "an object, or a JSON string holding one"))
	if err != nil {
		panic(err) // a constant message
	}
	return v
}

func (rt *Runtime) callHandler(envelope *validate.Validator, verifier *oauth.Verifier) http.Handler {
	limit := rt.opts.MaxArgumentBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		var cs *callSpan
		if rt.tracing != nil {
			// The span covers the whole request, so that a refused
			// body is traced too; it is named once the tool is known.
			ctx, cs = rt.tracing.start(ctx, operationExecTool, "", nil, r.Header, trace.SpanKindServer)
			cs.caller(oauth.CallerFrom(ctx))
		}
		fail := func(status int, outcome, msg string) {
			writeJSONError(w, status, msg)
			cs.endHTTP(status, outcome, msg)
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCallBody(limit)))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				fail(http.StatusRequestEntityTooLarge, outcomeProtocolError, fmt.Sprintf("request body over %d bytes: the arguments may be at most %d bytes", maxCallBody(limit), limit))
				return
			}
			fail(http.StatusBadRequest, outcomeProtocolError, "reading the body: "+err.Error())
			return
		}
		exact, err := envelope.Validate(body)
		if err != nil {
			fail(http.StatusBadRequest, outcomeProtocolError, `the body must be {"name": "...", "arguments": {...}}: `+err.Error())
			return
		}
		var req CallRequest
		if err := json.Unmarshal(exact, &req); err != nil {
			// The validator let through only what decodes.
			fail(http.StatusInternalServerError, outcomeProtocolError, "decoding the checked body: "+err.Error())
			return
		}
		// The call checks the arguments, and their size once the string
		// form is unwrapped; a problem there is a tool error, which a
		// model reads.
		args := req.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		// The call is the OAuth caller's, if there is one (see Call): a
		// tool hidden from it is unknown, here too, and one it may step up
		// to gets the challenge.
		if rt.Snapshot().lookup(req.Name) != nil {
			cs.tool(operationExecTool, req.Name)
		}
		start := time.Now()
		res, err := rt.Call(ctx, req.Name, args)
		rt.auditCall(oauth.CallerFrom(ctx), req.Name, outcome(res, err), time.Since(start), args)
		var scopeErr *InsufficientScopeError
		switch {
		case errors.Is(err, ErrUnknownTool):
			fail(http.StatusNotFound, outcomeProtocolError, err.Error())
			return
		case errors.As(err, &scopeErr) && verifier != nil:
			verifier.InsufficientScope(w, scopeErr.Scopes, scopeErr.Error())
			cs.endHTTP(http.StatusForbidden, outcomeProtocolError, scopeErr.Error())
			return
		case err != nil:
			writeJSONError(w, http.StatusServiceUnavailable, err.Error())
			cs.end(nil, err)
			return
		}
		writeJSON(w, http.StatusOK, CallResponse{Content: ToMCPContent(res.Content), StructuredContent: res.StructuredContent, IsError: res.IsError})
		cs.end(res, nil)
	})
}

// healthHandler answers probes. Without the token (when there is one) it
// says only that the server is up: the tool count and the catalog's
// fingerprint tell an attacker which version of which contracts it runs.
func (rt *Runtime) healthHandler(token string, verifier *oauth.Verifier) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, code := "ok", http.StatusOK
		if rt.draining.Load() {
			// A load balancer takes a draining instance out of rotation.
			status, code = "draining", http.StatusServiceUnavailable
		}
		var caller *oauth.Caller
		if verifier != nil {
			caller = accessCaller(r, verifier)
		}
		if token != "" && !hasToken(r, token) || verifier != nil && caller == nil {
			writeJSON(w, code, map[string]any{"status": status})
			return
		}
		snap := rt.Snapshot()
		// An OAuth caller counts the tools it sees, and gets the
		// fingerprint of those: the count or the fingerprint of all would
		// tell it that hidden ones exist, and when they change.
		tools := 0
		for _, e := range snap.byName {
			if allows(caller, e.tool) {
				tools++
			}
		}
		fingerprint := snap.Catalog.Fingerprint
		if tools < len(snap.byName) {
			fingerprint, _ = visibleCatalog(caller, snap.Catalog).FingerprintOfTools() // a sealed catalog's parts always encode
		}
		writeJSON(w, code, map[string]any{"status": status, "tools": tools, "catalog": fingerprint})
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// metrics counts calls, errors and latency per tool, in a registry of the
// runtime's own: no global state, so tests and several runtimes in one
// process do not collide.
type metrics struct {
	registry *prometheus.Registry
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolc_calls_total",
			Help: "Tool calls, by tool and outcome: ok, tool_error, cancelled (the caller cancelled or disconnected), deadline (the caller's own deadline passed), refused (the server was shutting down).",
		}, []string{"tool", "outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolc_call_errors_total", Help: "Tool calls that ended in a tool error, by tool and kind (invalid_arguments, handler, timeout, result, overloaded).",
		}, []string{"tool", "kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolc_call_duration_seconds", Help: "Tool call latency, validation and handler included, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"tool"}),
	}
	m.registry.MustRegister(m.calls, m.errors, m.latency,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// observe counts a finished call: its outcome, its latency and, for a
// tool error, its kind. A call whose caller went away is counted too, as
// cancelled or deadline, so that the counts add up to the calls made.
func (m *metrics) observe(tool string, start time.Time, errKind string, err error) {
	outcome := "ok"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		outcome = "deadline"
	case err != nil:
		outcome = "cancelled"
	case errKind != "":
		outcome = "tool_error"
		m.errors.WithLabelValues(tool, errKind).Inc()
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.latency.WithLabelValues(tool).Observe(time.Since(start).Seconds())
}

// refused counts a call turned away because the server is draining.
func (m *metrics) refused(tool string) {
	m.calls.WithLabelValues(tool, "refused").Inc()
}
