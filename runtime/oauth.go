package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
)

// callerInfo is the TokenInfo.Extra key that carries the oauth.Caller to
// go-sdk's method handlers, which see TokenInfo but not the HTTP request's
// context.
const callerInfo = "toolc.caller"

// oauthGuard is the OAuth counterpart of bearer: oauth.Middleware answers
// a request without a valid token with 401 and its challenge, then go-sdk's
// RequireBearerToken hands the already-verified caller on as TokenInfo,
// so that MCP requests see it (and go-sdk binds a legacy session to its
// user) without a second verification.
func oauthGuard(v *oauth.Verifier) func(http.Handler) http.Handler {
	fromContext := func(ctx context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		c := oauth.CallerFrom(r.Context())
		if c == nil {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{Scopes: c.Scopes, Expiration: c.Expiry, UserID: c.Subject, Extra: map[string]any{callerInfo: c}}, nil
	}
	sdk := sdkauth.RequireBearerToken(fromContext, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: v.MetadataURL(), ClockSkew: oauth.DefaultLeeway})
	return func(next http.Handler) http.Handler {
		return v.Middleware(sdk(next))
	}
}

// accessCaller returns the caller of r's access token, if v accepts it,
// else nil, for /healthz, which answers everyone but tells details only to
// a caller.
func accessCaller(r *http.Request, v *oauth.Verifier) *oauth.Caller {
	scheme, raw, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	c, err := v.Verify(r.Context(), strings.TrimSpace(raw))
	if err != nil {
		return nil
	}
	return c
}

// callerOf returns the OAuth caller of an MCP request, or nil when the
// server does not use OAuth.
func callerOf(req mcp.Request) *oauth.Caller {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	c, _ := extra.TokenInfo.Extra[callerInfo].(*oauth.Caller)
	return c
}

// allows reports whether the caller may see and call the tool. No caller
// (no OAuth) sees everything.
func allows(c *oauth.Caller, t *catalog.Tool) bool {
	return c == nil || len(c.Missing(t.Scopes)) == 0
}

// access is what an OAuth caller may do with, and learn of, a tool.
type access int

const (
	// callable: the token holds every scope the tool needs (or there is
	// no OAuth). The caller lists and calls the tool.
	callable access = iota
	// stepUp: the token holds the scopes of the tool's service but not
	// the tool's own. The tool is not listed, but a call to it is told
	// which scopes it needs (403 insufficient_scope), so that the client
	// can ask for them: the caller may use the service, and learning
	// that one of its tools wants more is what lets it step up.
	stepUp
	// hidden: the token lacks the service's scopes. The caller may not
	// learn that the tool exists: every answer about it is the answer
	// about a tool that does not exist, word for word.
	hidden
)

func accessTo(c *oauth.Caller, e *entry) access {
	switch {
	case allows(c, e.tool):
		return callable
	case len(c.Missing(e.service.Scopes)) == 0:
		return stepUp
	}
	return hidden
}

// InsufficientScopeError is the error of Runtime.Call for a tool that the
// caller (oauth.CallerFrom of the call's context) may know of but whose
// scopes its token lacks: the HTTP answer is 403 with the
// insufficient_scope challenge, and over MCP the JSON-RPC error
// CodeInsufficientScope.
type InsufficientScopeError struct {
	Tool string
	// Scopes are all the scopes the tool needs, not only the missing
	// ones, so that a new token asked for with them has them all.
	Scopes []string
}

func (e *InsufficientScopeError) Error() string {
	return fmt.Sprintf("tool %q needs the scopes %s", e.Tool, strings.Join(e.Scopes, " "))
}

// hiddenToolError is the error for a tool the caller may not know of. Its
// text is an unknown tool's, and it is ErrUnknownTool to errors.Is, so that
// every answer made from it is an unknown tool's; only the audit line
// tells the two apart, for the operator.
type hiddenToolError struct{ name string }

func (e *hiddenToolError) Error() string {
	return fmt.Sprintf("%v %s", ErrUnknownTool, quoteName(e.name))
}
func (e *hiddenToolError) Is(target error) bool { return target == ErrUnknownTool }

// unknownToolRPCError is go-sdk's answer to a tools/call of a tool the
// server does not have, made here for a hidden tool so that the two are
// the same bytes (TestHiddenToolLooksUnknown holds them to it).
func unknownToolRPCError(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// withCaller puts the OAuth caller of ctx, if any, on it as the handler's
// plugins.Caller: in process for runtime.Local, and through the plugin
// protocol for a plugin. Only the subject, client and scopes go: never
// the token.
func withCaller(ctx context.Context, c *oauth.Caller) context.Context {
	if c == nil {
		return ctx
	}
	return plugins.WithCaller(ctx, plugins.Caller{Subject: c.Subject, ClientID: c.ClientID, Scopes: c.Scopes})
}

// auditHidden is the middleware of the server without tools that answers
// a 2026-07-28 call of a hidden tool (mcpEndpoint): the audit line that
// scopeFilter would write.
func (rt *Runtime) auditHidden(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
			rt.auditCall(callerOf(req), p.Name, "hidden", 0, p.Arguments)
		}
		return next(ctx, method, req)
	}
}

// callerMetrics serves /metrics to an OAuth caller: the series of the
// tools it sees, as tools/list shows them. The series of every tool would
// name the hidden ones; those of a tool a reload removed are not shown
// either, as nothing says whom it was for.
func (rt *Runtime) callerMetrics(w http.ResponseWriter, r *http.Request) {
	c, snap := oauth.CallerFrom(r.Context()), rt.Snapshot()
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		// Gather builds the families afresh for each call: they are this
		// request's to filter.
		families, err := rt.metrics.registry.Gather()
		out := families[:0]
		for _, f := range families {
			f.Metric = slices.DeleteFunc(f.Metric, func(m *dto.Metric) bool {
				for _, l := range m.GetLabel() {
					if l.GetName() == "tool" {
						e := snap.byName[l.GetValue()]
						return e == nil || !allows(c, e.tool)
					}
				}
				return false
			})
			if len(f.Metric) > 0 {
				out = append(out, f)
			}
		}
		return out, err
	})
	promhttp.HandlerFor(g, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// hiddenCallKey marks the context of an MCP request that calls a tool
// hidden from its caller (see mcpEndpoint.server).
type hiddenCallKey struct{}

// scopeFilter is MCP middleware for OAuth callers: tools/list lists only
// the tools whose scopes the token holds, and tools/call of any other is
// refused (the HTTP layer already answered it with 403; this holds for
// any path that reaches the server). Without OAuth it changes nothing.
func (rt *Runtime) scopeFilter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c := callerOf(req)
		if c == nil {
			return next(ctx, method, req)
		}
		switch method {
		case "tools/call":
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok {
				break
			}
			if e := rt.Snapshot().byMCP[p.Name]; e != nil {
				switch accessTo(c, e) {
				case stepUp:
					rt.auditCall(c, p.Name, "insufficient_scope", 0, p.Arguments)
					return nil, insufficientScopeError(e.tool)
				case hidden:
					rt.auditCall(c, p.Name, "hidden", 0, p.Arguments)
					return nil, unknownToolRPCError(p.Name)
				}
			}
			// The tool handler's context is not the HTTP request's: the
			// caller goes along on it, for Runtime.Call.
			ctx = oauth.WithCaller(ctx, c)
			start := time.Now()
			res, err := next(ctx, method, req)
			out := "ok"
			if r, ok := res.(*mcp.CallToolResult); err != nil || !ok {
				out = "error"
			} else if r.IsError {
				out = "tool_error"
			}
			rt.auditCall(c, p.Name, out, time.Since(start), p.Arguments)
			return res, err
		case "tools/list":
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				snap := rt.Snapshot()
				out := *list
				out.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool {
					e := snap.byMCP[t.Name]
					return e == nil || !allows(c, e.tool)
				})
				return &out, nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// CodeInsufficientScope is the JSON-RPC error of a tools/call whose token
// lacks the tool's scopes; MCP defines none, and the HTTP answer is 403
// with the insufficient_scope challenge.
const CodeInsufficientScope = -32003

func insufficientScopeError(t *catalog.Tool) error {
	data, _ := json.Marshal(map[string]any{"scopes": t.Scopes})
	return &jsonrpc.Error{Code: CodeInsufficientScope, Message: fmt.Sprintf("insufficient scope: tool %q needs the scopes %s", t.Name, strings.Join(t.Scopes, " ")), Data: data}
}

// mcpScopeCheck answers a tools/call whose token lacks the tool's scopes
// with 403 and the insufficient_scope challenge naming every scope the
// tool needs, so that the client can step up (MCP authorization, scope
// challenge handling). It reads the JSON-RPC body as encoding/json does,
// as go-sdk does, so that it judges the tool go-sdk will call.
func (rt *Runtime) mcpScopeCheck(v *oauth.Verifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := oauth.CallerFrom(r.Context())
		if c == nil || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxMCPBody))
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "reading the body: "+err.Error())
			return
		}
		// Whatever lies past the limit still reaches go-sdk, which refuses
		// it.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		var msgs []rpcCall
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) > 0 && trimmed[0] == '[' {
			json.Unmarshal(body, &msgs)
		} else {
			var m rpcCall
			if json.Unmarshal(body, &m) == nil {
				msgs = append(msgs, m)
			}
		}
		snap := rt.Snapshot()
		for _, m := range msgs {
			if m.Method != "tools/call" {
				continue
			}
			e := snap.byMCP[m.Params.Name]
			if e == nil {
				continue
			}
			switch accessTo(c, e) {
			case stepUp:
				err := &InsufficientScopeError{Tool: e.tool.Name, Scopes: e.tool.Scopes}
				// The call ends here, before go-sdk and scopeFilter see it,
				// so its audit line is written here.
				rt.auditCall(c, m.Params.Name, "insufficient_scope", 0, m.Params.Arguments)
				v.InsufficientScope(w, err.Scopes, err.Error())
				rt.traceRefused(r, m.Params.Meta, m.Params.Name, c, err.Error())
				return
			case hidden:
				if len(msgs) == 1 {
					// go-sdk checks a 2026-07-28 call's Mcp-Param-*
					// headers against the tool it has before any
					// middleware runs, and would answer a mismatch for
					// a hidden tool where it answers nothing for an
					// unknown one: the request goes to a server that has
					// no tools (mcpEndpoint.server).
					r = r.WithContext(context.WithValue(r.Context(), hiddenCallKey{}, true))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

type rpcCall struct {
	Method string `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      mcp.Meta        `json:"_meta"` // the caller's trace context, for the span of a refusal
	} `json:"params"`
}

// visibleCatalog is the catalog as the caller may see it.
func visibleCatalog(c *oauth.Caller, cat *catalog.Catalog) *catalog.Catalog {
	if c == nil {
		return cat
	}
	out := &catalog.Catalog{Fingerprint: cat.Fingerprint}
	for _, s := range cat.Services {
		var tools []*catalog.Tool
		for _, t := range s.Tools {
			if allows(c, t) {
				tools = append(tools, t)
			}
		}
		if len(tools) > 0 {
			ns := *s
			ns.Tools = tools
			out.Services = append(out.Services, &ns)
		}
	}
	return out
}

// CatalogScopes returns every scope that a tool of the catalog needs,
// sorted: the scopes_supported of the resource's metadata.
func CatalogScopes(cat *catalog.Catalog) []string {
	var out []string
	for _, t := range cat.Tools() {
		out = append(out, t.Scopes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// outcome names how a call ended, for the audit line.
func outcome(res *Result, err error) string {
	var hiddenErr *hiddenToolError
	var scopeErr *InsufficientScopeError
	switch {
	case errors.As(err, &hiddenErr):
		return "hidden"
	case errors.As(err, &scopeErr):
		return "insufficient_scope"
	case err != nil && errors.Is(err, ErrUnknownTool):
		return "unknown_tool"
	case err != nil:
		return "unavailable"
	case res.IsError:
		return "tool_error"
	}
	return "ok"
}

// auditLogger is the logger of the audit lines: Options.Audit, else
// Options.Logger, with the audit=true that marks every line attached once,
// so that a handler that formats attributes ahead (slog's text and JSON
// handlers do) formats it once rather than per line.
func auditLogger(o Options) *slog.Logger {
	log := o.Audit
	if log == nil {
		log = o.Logger
	}
	return log.With("audit", true)
}

// auditCall logs one line per call of an OAuth caller: who, which tool,
// the outcome and how long it took. The arguments only with
// Options.AuditArguments: they are the user's data (a note's text, an
// address), and an audit log is kept longer and read by more people than
// the calls themselves. The attributes are slog.Attrs, not key-value
// pairs, which would each be boxed: one line per call, on every call.
func (rt *Runtime) auditCall(c *oauth.Caller, tool, outcome string, took time.Duration, args json.RawMessage) {
	if c == nil || !rt.auditLog.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	duration := slog.Float64("duration_ms", float64(took.Microseconds())/1000)
	if rt.opts.AuditArguments {
		rt.auditLog.LogAttrs(context.Background(), slog.LevelInfo, "call", slog.String("subject", c.Subject), slog.String("client", c.ClientID),
			slog.String("tool", tool), slog.String("outcome", outcome), duration, slog.String("arguments", auditArguments(args)))
		return
	}
	rt.auditLog.LogAttrs(context.Background(), slog.LevelInfo, "call", slog.String("subject", c.Subject), slog.String("client", c.ClientID),
		slog.String("tool", tool), slog.String("outcome", outcome), duration)
}

// auditArguments is the arguments as the audit line carries them: the
// JSON text as it came, bounded, so that one call cannot write megabytes
// into the log.
func auditArguments(args json.RawMessage) string {
	const most = 4 << 10
	if len(args) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(args[cut]) {
			cut--
		}
		return fmt.Sprintf("%s... (%d bytes)", args[:cut], len(args))
	}
	return string(args)
}
