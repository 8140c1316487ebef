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

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
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

// hasAccessToken reports whether r carries an access token that v
// accepts, for /healthz, which answers everyone but tells details only to
// a caller.
func hasAccessToken(r *http.Request, v *oauth.Verifier) bool {
	scheme, raw, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	_, err := v.Verify(r.Context(), strings.TrimSpace(raw))
	return err == nil
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
			if e := rt.Snapshot().byMCP[p.Name]; e != nil && !allows(c, e.tool) {
				auditCall(rt.audit(), c, p.Name, "insufficient_scope", 0)
				return nil, insufficientScopeError(e.tool)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			out := "ok"
			if r, ok := res.(*mcp.CallToolResult); err != nil || !ok {
				out = "error"
			} else if r.IsError {
				out = "tool_error"
			}
			auditCall(rt.audit(), c, p.Name, out, time.Since(start))
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
			if e := snap.byMCP[m.Params.Name]; e != nil && !allows(c, e.tool) {
				desc := fmt.Sprintf("tool %q needs the scopes %s", e.tool.Name, strings.Join(e.tool.Scopes, " "))
				// The call ends here, before go-sdk and scopeFilter see it,
				// so its audit line is written here.
				auditCall(rt.audit(), c, m.Params.Name, "insufficient_scope", 0)
				v.InsufficientScope(w, e.tool.Scopes, desc)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

type rpcCall struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
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
	switch {
	case err != nil && errors.Is(err, ErrUnknownTool):
		return "unknown_tool"
	case err != nil:
		return "unavailable"
	case res.IsError:
		return "tool_error"
	}
	return "ok"
}

func (rt *Runtime) audit() *slog.Logger {
	if rt.opts.Audit != nil {
		return rt.opts.Audit
	}
	return rt.opts.Logger
}

// auditCall logs one line per call of an OAuth caller: who, which tool,
// the outcome and how long it took. Never the arguments.
func auditCall(log *slog.Logger, c *oauth.Caller, tool, outcome string, took time.Duration) {
	if log == nil || c == nil {
		return
	}
	log.Info("call", "audit", true, "subject", c.Subject, "client", c.ClientID, "tool", tool, "outcome", outcome, "duration_ms", float64(took.Microseconds())/1000)
}
