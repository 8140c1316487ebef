package mcpserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// traceCalls is the outermost receiving middleware of the MCP server: one
// server span per tools/call (runtime.StartSpan), whatever answers it
// (go-sdk for an unknown tool, the scope filter, the runtime).
func traceCalls(rt *runtime.Runtime) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if !rt.Tracing() {
			return next
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if method != "tools/call" || !ok || p == nil {
				return next(ctx, method, req)
			}
			st := runtime.SpanStart{Method: method, Tool: p.Name, Caller: callerOf(req)}
			if p.Meta != nil {
				st.Meta = metaCarrier(p.Meta)
			}
			if extra := req.GetExtra(); extra != nil {
				st.Header = extra.Header
			}
			if call, ok := req.(*mcp.CallToolRequest); ok {
				st.ProtocolVersion = call.ProtocolVersion()
				if call.Session != nil {
					st.Session = call.Session.ID()
				}
			}
			ctx, span := rt.StartSpan(ctx, st)
			res, err := next(ctx, method, req)
			endSpan(span, res, err)
			return res, err
		}
	}
}

// endSpan ends the span of a tools/call with the answer the MCP server
// sends.
func endSpan(span *runtime.Span, res mcp.Result, err error) {
	var rpcErr *jsonrpc.Error
	switch r, _ := res.(*mcp.CallToolResult); {
	case errors.As(err, &rpcErr):
		span.EndRPCError(rpcErr.Code, rpcErr.Message)
	case err != nil:
		span.End(nil, err)
	case r != nil:
		span.EndResult(r.IsError, len(r.InputRequests) > 0)
	default:
		span.EndResult(false, false)
	}
}

// metaCarrier reads and writes the trace context in MCP's params._meta,
// whose values are JSON values, not only strings.
type metaCarrier mcp.Meta

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// traceRefused records the span of a tools/call that the HTTP layer
// answered with 403 before the MCP server saw it (scopeCheck).
func traceRefused(rt *runtime.Runtime, r *http.Request, meta mcp.Meta, tool string, c *oauth.Caller, msg string) {
	st := runtime.SpanStart{Method: "tools/call", Tool: tool, Header: r.Header, Caller: c}
	if meta != nil {
		st.Meta = metaCarrier(meta)
	}
	_, span := rt.StartSpan(r.Context(), st)
	span.EndHTTPError(http.StatusForbidden, msg)
}
