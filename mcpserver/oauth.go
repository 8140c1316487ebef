package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// The go-sdk half of OAuth. httpapi puts oauth.Verifier.Middleware in
// front of /mcp, which answers a request without a valid token with 401
// and puts the verified caller on the request's context; this file hands
// that caller to go-sdk and holds MCP requests to the runtime's scope
// policy (runtime.AccessTo).

// callerInfo is the TokenInfo.Extra key that carries the oauth.Caller to
// go-sdk's method handlers, which see TokenInfo but not the HTTP request's
// context.
const callerInfo = "toolc.caller"

// tokenInfo hands the caller that oauth.Middleware verified on to go-sdk,
// with go-sdk's RequireBearerToken, as TokenInfo: so that MCP requests see
// it, and go-sdk binds a legacy session to its user, without a second
// verification. Waits for go-sdk: a way to give a session its user other
// than through RequireBearerToken's context key.
func tokenInfo(v *oauth.Verifier) func(http.Handler) http.Handler {
	fromContext := func(ctx context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		c := oauth.CallerFrom(r.Context())
		if c == nil {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{Scopes: c.Scopes, Expiration: c.Expiry, UserID: c.Subject, Extra: map[string]any{callerInfo: c}}, nil
	}
	return sdkauth.RequireBearerToken(fromContext, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: v.MetadataURL(), ClockSkew: oauth.DefaultLeeway})
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

// unknownToolRPCError is go-sdk's answer to a tools/call of a tool the
// server does not have, made here for a hidden tool so that the two are
// the same bytes (TestHiddenToolLooksUnknown holds them to it).
func unknownToolRPCError(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// auditHidden is the middleware of the server without tools that answers
// a 2026-07-28 call of a hidden tool (mcpEndpoint): the audit line that
// scopeFilter would write.
func auditHidden(rt *runtime.Runtime) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				rt.Audit(callerOf(req), p.Name, "hidden", 0, p.Arguments)
			}
			return next(ctx, method, req)
		}
	}
}

// hiddenCallKey marks the context of an MCP request that calls a tool
// hidden from its caller (see newMCPEndpoint).
type hiddenCallKey struct{}

// scopeFilter is MCP middleware for OAuth callers: tools/list lists only
// the tools whose scopes the token holds, and tools/call of any other is
// refused (the HTTP layer already answered it with 403; this holds for
// any path that reaches the server). Without OAuth it changes nothing.
func scopeFilter(rt *runtime.Runtime) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
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
				if t, ok := rt.Snapshot().ByMCPName(p.Name); ok {
					switch runtime.AccessTo(c, t) {
					case runtime.StepUp:
						rt.Audit(c, p.Name, "insufficient_scope", 0, p.Arguments)
						return nil, insufficientScopeError(p.Name, t.Tool)
					case runtime.Hidden:
						rt.Audit(c, p.Name, "hidden", 0, p.Arguments)
						return nil, unknownToolRPCError(p.Name)
					}
				}
				// The tool handler's context is not the HTTP request's: the
				// caller goes along on it, for Runtime.Call.
				ctx = oauth.WithCaller(ctx, c)
				start := time.Now()
				res, err := next(ctx, method, req)
				rt.Audit(c, p.Name, callOutcome(res, err), time.Since(start), p.Arguments)
				return res, err
			case "tools/list":
				res, err := next(ctx, method, req)
				if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					snap := rt.Snapshot()
					out := *list
					out.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(tl *mcp.Tool) bool {
						t, ok := snap.ByMCPName(tl.Name)
						return !ok || !runtime.Allows(c, t.Tool)
					})
					return &out, nil
				}
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// callOutcome is the outcome of an MCP tools/call in its audit line: ok,
// tool_error, or error for a call answered with a JSON-RPC error.
func callOutcome(res mcp.Result, err error) string {
	r, ok := res.(*mcp.CallToolResult)
	switch {
	case err != nil || !ok || r == nil:
		return "error"
	case r.IsError:
		return "tool_error"
	}
	return "ok"
}

// CodeInsufficientScope is the JSON-RPC error of a tools/call whose token
// lacks the tool's scopes; MCP defines none, and the HTTP answer is 403
// with the insufficient_scope challenge.
const CodeInsufficientScope = -32003

// insufficientScopeError names the tool by called, the MCP name the client
// called it by.
func insufficientScopeError(called string, t *catalog.Tool) error {
	data, _ := json.Marshal(map[string]any{"scopes": t.Scopes})
	return &jsonrpc.Error{Code: CodeInsufficientScope, Message: fmt.Sprintf("insufficient scope: tool %q needs the scopes %s", called, strings.Join(t.Scopes, " ")), Data: data}
}

// scopeCheck answers a tools/call whose token lacks the tool's scopes
// with 403 and the insufficient_scope challenge naming every scope the
// tool needs, so that the client can step up (MCP authorization, scope
// challenge handling). It reads the body that rejectAmbiguous read and
// passed, as go-sdk reads it (message.go), so that it judges the tool
// go-sdk will call.
func scopeCheck(rt *runtime.Runtime, v *oauth.Verifier, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := oauth.CallerFrom(r.Context())
		b, ok := r.Body.(*mcpBody)
		if c == nil || !ok {
			next.ServeHTTP(w, r)
			return
		}
		msgs, _, _ := b.messages()
		snap := rt.Snapshot()
		for _, m := range msgs {
			p, ok := callParams(m)
			if !ok {
				continue
			}
			t, ok := snap.ByMCPName(p.Name)
			if !ok {
				continue
			}
			switch runtime.AccessTo(c, t) {
			case runtime.StepUp:
				err := &runtime.InsufficientScopeError{Tool: p.Name, Scopes: t.Tool.Scopes}
				// The call ends here, before go-sdk and scopeFilter see it,
				// so its audit line is written here.
				rt.Audit(c, p.Name, "insufficient_scope", 0, p.Arguments)
				v.InsufficientScope(w, err.Scopes, err.Error())
				traceRefused(rt, r, p.Meta, p.Name, c, err.Error())
				return
			case runtime.Hidden:
				if len(msgs) == 1 {
					// go-sdk checks a 2026-07-28 call's Mcp-Param-*
					// headers against the tool it has before any
					// middleware runs, and would answer a mismatch for
					// a hidden tool where it answers nothing for an
					// unknown one: the request goes to a server that has
					// no tools (newMCPEndpoint). Waits for go-sdk:
					// the header check after the receiving middleware.
					r = r.WithContext(context.WithValue(r.Context(), hiddenCallKey{}, true))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}
