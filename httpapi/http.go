// Package httpapi is toolc's HTTP server: MCP at /mcp (package mcpserver's
// handler), the function-call API (GET /v1/tools, POST /v1/call),
// /healthz and Prometheus metrics at /metrics, on one mux, behind the
// checks every path shares: Origin and DNS rebinding, and the bearer token
// or OAuth access token. Serve listens within ConnLimits until its context
// ends, then drains the runtime and shuts down: toolc serve, toolc dev and
// a service that embeds its catalog (examples/embed) all serve through it,
// by way of serve.Run.
package httpapi

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

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/bodymem"
	"github.com/toolc/toolc/internal/httpjson"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/validate"
)

// Options configure the HTTP server.
type Options struct {
	// Token, if set, is the bearer token that /mcp, /v1/ and /metrics
	// require.
	Token string
	// OAuth, if set, makes the server an OAuth resource server in place
	// of Token (set one or neither): /mcp, /v1/ and /metrics take access
	// tokens that OAuth verifies, each caller sees and calls only the
	// tools whose scopes its token holds (runtime.AccessTo), and the
	// resource's metadata is served at
	// /.well-known/oauth-protected-resource.
	OAuth *oauth.Verifier
	// AllowedOrigins lists browser origins ("http://localhost:6274") that
	// may call the server besides its own. Any other Origin gets 403.
	AllowedOrigins []string
	Logger         *slog.Logger
	// MCP configures /mcp: sessions, SSE polling, stateless replicas. Its
	// OAuth and Logger are not read: /mcp takes the ones above, as every
	// path of the server does.
	MCP mcpserver.HTTPOptions
	// Gate, if set, is the gate that holds the MCP server's tools/list and
	// tools/call while the server loads its tools (mcpserver.Gate): the
	// function-call API waits on it too, and answers 503 with the reason
	// if the load failed, and /healthz answers 503, "starting" until it
	// opens and "failed" after a load that failed.
	Gate *mcpserver.Gate
	// Collectors are served at /metrics beside the calls' counts: the
	// withdrawals of upstream tools (upstream.Metrics), say. A series
	// with a tool label is shown to an OAuth caller that sees the tool.
	Collectors []prometheus.Collector
}

// NewHandler serves, on one mux: MCP over Streamable HTTP at /mcp, every
// revision on the one URL (mcpserver.NewHTTPHandler); the function-call
// API at GET /v1/tools, POST /v1/call and, with tasks, /v1/tasks
// (tasks.go); /healthz; and Prometheus
// metrics at /metrics, of every call of rt (runtime.Stats).
func NewHandler(rt *runtime.Runtime, srv *mcpserver.Server, opts Options) http.Handler {
	mux := http.NewServeMux()
	auth := bearer(opts.Token)
	mcpAuth := auth
	mcpOpts := opts.MCP
	mcpOpts.OAuth, mcpOpts.Logger = opts.OAuth, opts.Logger
	if v := opts.OAuth; v != nil {
		// /v1/ and /metrics read the caller that v.Middleware puts in the
		// context; the MCP handler has its own guard, with go-sdk's half.
		auth, mcpAuth = v.Middleware, func(h http.Handler) http.Handler { return h }
		meta := v.MetadataHandler(func() []string { return catalogScopes(rt.Snapshot().Catalog) })
		mux.Handle("GET "+oauth.MetadataPath, meta)
		mux.Handle("GET "+oauth.MetadataPath+"/mcp", meta)
	}
	mux.Handle("/mcp", mcpAuth(mcpserver.NewHTTPHandler(rt, srv, mcpOpts)))
	mux.Handle("GET /v1/tools", auth(gated(opts.Gate, toolsHandler(rt))))
	mux.Handle("POST /v1/call", auth(gated(opts.Gate, callHandler(rt, newEnvelopeValidator(), opts.OAuth))))
	if m := opts.MCP.Tasks; m != nil {
		mux.Handle("POST /v1/tasks", auth(gated(opts.Gate, startTaskHandler(rt, m, newEnvelopeValidator()))))
		mux.Handle("GET /v1/tasks/{id}", auth(taskHandler(m, false)))
		mux.Handle("DELETE /v1/tasks/{id}", auth(taskHandler(m, true)))
	}
	mux.Handle("GET /healthz", healthHandler(rt, opts.Gate, opts.Token, opts.OAuth))
	// The metrics name every tool and count its calls: they take the
	// token too (Prometheus sends it with authorization: credentials),
	// and an OAuth caller gets those of the tools it sees.
	m := newMetrics(rt, opts.Collectors...)
	var metrics http.Handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	if opts.OAuth != nil {
		metrics = callerMetrics(rt, m)
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
//
// A browser sends no Origin with a GET that a page makes without CORS (an
// <img>, a <script>, a link followed): any web page could so make the
// server work (GET /v1/tools?tools=... and /metrics cost CPU, on loopback
// without a token). Such a request says where it comes from in
// Sec-Fetch-Site (Fetch Metadata, which every current browser sends and
// no page can suppress): one from another site is refused too. "none" (the
// user typed the URL) and "same-origin" pass.
func checkOrigin(allowed []string, token bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := rebound(r, token); why != "" {
			httpjson.Error(w, http.StatusForbidden, why)
			return
		}
		origin := r.Header.Get("Origin")
		if site := r.Header.Get("Sec-Fetch-Site"); origin == "" && (site == "cross-site" || site == "same-site") {
			httpjson.Error(w, http.StatusForbidden, fmt.Sprintf("a request from a page of another site (Sec-Fetch-Site: %s) without an Origin header may not call this server", site))
			return
		}
		if origin != "" && !slices.Contains(allowed, origin) {
			u, err := url.Parse(origin)
			if err != nil || !sameHost(u.Host, r.Host) {
				httpjson.Error(w, http.StatusForbidden, fmt.Sprintf("origin %q may not call this server; allow it with --allow-origin", origin))
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
				httpjson.Error(w, http.StatusUnauthorized, "missing or wrong bearer token")
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

// MaxSelectTools bounds the names of GET /v1/tools?tools=: more than any
// catalog needs in one request (leave ?tools= out for all of them), and
// few enough that the answer about unknown ones costs little.
const MaxSelectTools = 1024

// toolsHandler serves GET /v1/tools: the catalog's projection.
func toolsHandler(rt *runtime.Runtime) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveTools(rt, w, r) })
}

func serveTools(rt *runtime.Runtime, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = string(catalog.MCP)
	}
	if len(format) > 64 {
		// No format's name is that long; the error quotes what it got,
		// which must not echo a megabyte.
		format = strings.ToValidUTF8(format[:64], "") + "..."
	}
	target, err := catalog.ParseTarget(format)
	if err != nil {
		httpjson.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	// An OAuth caller sees only the tools its token may call; a hidden
	// tool named in ?tools= is unknown, like one that does not exist.
	cat := visibleCatalog(oauth.CallerFrom(r.Context()), rt.Snapshot().Catalog)
	if names := q.Get("tools"); names != "" {
		if n := strings.Count(names, ",") + 1; n > MaxSelectTools {
			httpjson.Error(w, http.StatusBadRequest, fmt.Sprintf("?tools= names %d tools, more than the %d it may; leave it out for every tool", n, MaxSelectTools))
			return
		}
		if cat, err = cat.SelectFor(target, strings.Split(names, ",")...); err != nil {
			httpjson.Error(w, http.StatusNotFound, err.Error())
			return
		}
	}
	data, err := cat.ProjectJSON(target, catalog.ProjectOptions{Strict: q.Get("strict") == "1" || q.Get("strict") == "true"})
	if err != nil {
		httpjson.Error(w, http.StatusInternalServerError, err.Error())
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

// ResponseOf is res as POST /v1/call answers it, a task's result as
// /v1/tasks gives it, and toolc call prints it.
func ResponseOf(res *runtime.Result) CallResponse {
	return CallResponse{Content: mcpserver.ToContent(res.Content), StructuredContent: res.StructuredContent, IsError: res.IsError}
}

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
// A name is at most runtime.MaxCallName bytes: tool and MCP names are at
// most 64, and an unknown name is quoted in the 404, which must not echo
// megabytes.
func newEnvelopeValidator() *validate.Validator {
	one, most := int64(1), int64(runtime.MaxCallName)
	v, err := validate.NewValidator(&catalog.Message{Fields: []*catalog.Field{
		{Name: "name", Type: catalog.String, Required: true, MinLength: &one, MaxLength: &most, Description: "the tool to call"},
		{Name: "arguments", Type: catalog.String, Description: "an object, or a JSON string holding one"},
	}}, validate.Naming("the body", "is"), validate.RawField("arguments", "an object, or a JSON string holding one"))
	if err != nil {
		panic(err) // a constant message
	}
	return v
}

// readCall reads the body of POST /v1/call (and /v1/tasks), or answers
// what is wrong with it through fail. args are the call's arguments: the
// call checks them, and their size once the string form is unwrapped; a
// problem there is a tool error, which a model reads.
func readCall(w http.ResponseWriter, r *http.Request, envelope *validate.Validator, limit int, fail func(status int, msg string)) (req CallRequest, args json.RawMessage, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCallBody(limit)))
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes: the arguments may be at most %d bytes", maxCallBody(limit), limit))
		case errors.Is(err, bodymem.ErrExhausted):
			w.Header().Set("Retry-After", "1")
			fail(http.StatusServiceUnavailable, err.Error())
		default:
			fail(http.StatusBadRequest, "reading the body: "+err.Error())
		}
		return req, nil, false
	}
	exact, err := envelope.Validate(body)
	if err != nil {
		fail(http.StatusBadRequest, `the body must be {"name": "...", "arguments": {...}}: `+err.Error())
		return req, nil, false
	}
	if err := json.Unmarshal(exact, &req); err != nil {
		// The validator let through only what decodes.
		fail(http.StatusInternalServerError, "decoding the checked body: "+err.Error())
		return req, nil, false
	}
	args = req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return req, args, true
}

func callHandler(rt *runtime.Runtime, envelope *validate.Validator, verifier *oauth.Verifier) http.Handler {
	limit := rt.Options().MaxArgumentBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		var cs *runtime.Span
		if rt.Tracing() {
			// The span covers the whole request, so that a refused
			// body is traced too; it is named once the tool is known.
			ctx, cs = rt.StartSpan(ctx, runtime.SpanStart{Header: r.Header, Caller: oauth.CallerFrom(ctx)})
		}
		fail := func(status int, msg string) {
			httpjson.Error(w, status, msg)
			cs.EndHTTPError(status, msg)
		}
		req, args, ok := readCall(w, r, envelope, limit, fail)
		if !ok {
			return
		}
		// The call is the OAuth caller's, if there is one (see Call): a
		// tool hidden from it is unknown, here too, and one it may step up
		// to gets the challenge.
		if _, ok := rt.Snapshot().Lookup(req.Name); ok {
			cs.SetTool(req.Name)
		}
		start := time.Now()
		res, err := rt.Call(ctx, req.Name, args)
		rt.Audit(oauth.CallerFrom(ctx), req.Name, runtime.AuditOutcome(res, err), time.Since(start), args)
		var scopeErr *runtime.InsufficientScopeError
		switch {
		case errors.Is(err, runtime.ErrUnknownTool):
			fail(http.StatusNotFound, err.Error())
			return
		case errors.As(err, &scopeErr) && verifier != nil:
			verifier.InsufficientScope(w, scopeErr.Scopes, scopeErr.Error())
			cs.EndHTTPError(http.StatusForbidden, scopeErr.Error())
			return
		case err != nil:
			httpjson.Error(w, http.StatusServiceUnavailable, err.Error())
			cs.End(nil, err)
			return
		}
		httpjson.Write(w, http.StatusOK, ResponseOf(res))
		cs.End(res, nil)
	})
}

// healthHandler answers probes. Without the token (when there is one) it
// says only that the server is up: the tool count and the catalog's
// fingerprint tell an attacker which version of which contracts it runs.
func healthHandler(rt *runtime.Runtime, gate *mcpserver.Gate, token string, verifier *oauth.Verifier) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, code := "ok", http.StatusOK
		var loadErr error
		if gate != nil {
			var open bool
			switch open, loadErr = gate.State(); {
			case !open:
				status, code = "starting", http.StatusServiceUnavailable
			case loadErr != nil:
				status, code = "failed", http.StatusServiceUnavailable
			}
		}
		if rt.Draining() {
			// A load balancer takes a draining instance out of rotation.
			status, code = "draining", http.StatusServiceUnavailable
		}
		var caller *oauth.Caller
		if verifier != nil {
			caller = accessCaller(r, verifier)
		}
		if token != "" && !hasToken(r, token) || verifier != nil && caller == nil {
			httpjson.Write(w, code, map[string]any{"status": status})
			return
		}
		if loadErr != nil {
			// What failed may name files and the machine's PATH: only
			// for a caller with the token.
			httpjson.Write(w, code, map[string]any{"status": status, "error": mcpserver.LoadError(loadErr)})
			return
		}
		snap := rt.Snapshot()
		// An OAuth caller counts the tools it sees, and gets the
		// fingerprint of those: the count or the fingerprint of all would
		// tell it that hidden ones exist, and when they change.
		all := snap.Tools()
		tools := 0
		for _, t := range all {
			if runtime.Allows(caller, t.Tool) {
				tools++
			}
		}
		fingerprint := snap.Catalog.Fingerprint
		if tools < len(all) {
			fingerprint, _ = visibleCatalog(caller, snap.Catalog).FingerprintOfTools() // a sealed catalog's parts always encode
		}
		httpjson.Write(w, code, map[string]any{"status": status, "tools": tools, "catalog": fingerprint})
	})
}

// gated holds a request of the function-call API until gate opens, and
// answers 503 with the reason if the load failed; nil passes everything.
func gated(gate *mcpserver.Gate, next http.Handler) http.Handler {
	if gate == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := gate.Wait(r.Context()); r.Context().Err() != nil {
			return // the client is gone
		} else if err != nil {
			httpjson.Error(w, http.StatusServiceUnavailable, mcpserver.LoadError(err))
			return
		}
		next.ServeHTTP(w, r)
	})
}
