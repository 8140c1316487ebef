package runtime

import (
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
)

// HTTPOptions configures the HTTP server.
type HTTPOptions struct {
	// Token, if set, is the bearer token that /mcp and /v1/ require.
	Token string
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
}

// NewHTTPHandler serves, on one mux: MCP over Streamable HTTP at /mcp,
// every revision on the one URL (see mcpEndpoint);
// the function-call API at GET /v1/tools and POST /v1/call; /healthz; and
// Prometheus metrics at /metrics.
func NewHTTPHandler(rt *Runtime, srv *mcp.Server, opts HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	auth := bearer(opts.Token)
	mux.Handle("/mcp", auth(newMCPEndpoint(rt, srv, opts)))
	mux.Handle("GET /v1/tools", auth(http.HandlerFunc(rt.serveTools)))
	mux.Handle("POST /v1/call", auth(http.HandlerFunc(rt.serveCall)))
	mux.HandleFunc("GET /healthz", rt.serveHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(rt.metrics.registry, promhttp.HandlerOpts{}))
	return checkOrigin(opts.AllowedOrigins, mux)
}

// checkOrigin refuses a request from a browser page of another origin,
// whatever its method: a web page must not drive local tools (DNS
// rebinding and cross-site requests). Requests without an Origin header,
// from programs rather than browsers, pass. The opaque origin "null" is
// refused like any other, unless allowed: browsers send it from sandboxed
// iframes and file: pages, which any web page can open.
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rebound(r) {
			writeJSONError(w, http.StatusForbidden, fmt.Sprintf("host %q is not a loopback name, but the request arrived on a loopback address (DNS rebinding?)", r.Host))
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

// rebound reports a request that reached a loopback listener under a name
// that is not a loopback name: a page that rebound its own domain to
// 127.0.0.1. go-sdk refuses these on /mcp; this covers /v1/ as well.
func rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := local.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
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
		want := []byte("Bearer " + token)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolc"`)
				writeJSONError(w, http.StatusUnauthorized, "missing or wrong bearer token")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
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
	cat := rt.Snapshot().Catalog
	if names := q.Get("tools"); names != "" {
		if cat, err = cat.Select(strings.Split(names, ",")...); err != nil {
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

func (rt *Runtime) serveCall(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(rt.opts.MaxArgumentBytes)+4096))
	if err != nil {
		writeJSONError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", rt.opts.MaxArgumentBytes))
		return
	}
	var req CallRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSONError(w, http.StatusBadRequest, `the body must be {"name": "...", "arguments": {...}}: `+err.Error())
		return
	}
	if req.Name == "" {
		writeJSONError(w, http.StatusBadRequest, `"name" is required`)
		return
	}
	if len(req.Arguments) == 0 || string(req.Arguments) == "null" {
		req.Arguments = json.RawMessage("{}")
	}
	res, err := rt.Call(r.Context(), req.Name, req.Arguments)
	switch {
	case errors.Is(err, ErrUnknownTool):
		writeJSONError(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		writeJSONError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, CallResponse{Content: ToMCPContent(res.Content), StructuredContent: res.StructuredContent, IsError: res.IsError})
}

func (rt *Runtime) serveHealth(w http.ResponseWriter, _ *http.Request) {
	snap := rt.Snapshot()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "tools": len(snap.byName), "catalog": snap.Catalog.Fingerprint})
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
			Name: "toolc_calls_total", Help: "Tool calls, by tool.",
		}, []string{"tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolc_call_errors_total", Help: "Tool calls that ended in a tool error, by tool and kind (invalid_arguments, handler, timeout, result).",
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

func (m *metrics) observe(tool string, start time.Time, errKind string) {
	m.calls.WithLabelValues(tool).Inc()
	m.latency.WithLabelValues(tool).Observe(time.Since(start).Seconds())
	if errKind != "" {
		m.errors.WithLabelValues(tool, errKind).Inc()
	}
}
