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
// server span per tools/call, prompts/get and resources/read
// (runtime.StartSpan), whatever answers it (go-sdk for an unknown tool,
// the scope filter, the runtime, a template or a file).
func traceCalls(rt *runtime.Runtime) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if !rt.Tracing() {
			return next
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			st, ok := spanStart(method, req)
			if !ok {
				return next(ctx, method, req)
			}
			ctx, span := rt.StartSpan(ctx, st)
			res, err := next(ctx, method, req)
			endSpan(span, res, err)
			return res, err
		}
	}
}

// spanStart is the start of the span of a request of method, or false for
// one that has none.
func spanStart(method string, req mcp.Request) (runtime.SpanStart, bool) {
	st := runtime.SpanStart{Method: method, Caller: callerOf(req)}
	var meta mcp.Meta
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		if method != "tools/call" || p == nil {
			return st, false
		}
		st.Tool, meta = p.Name, p.Meta
	case *mcp.GetPromptParams:
		if p == nil {
			return st, false
		}
		st.Tool, meta = p.Name, p.Meta
	case *mcp.ReadResourceParams:
		if p == nil {
			return st, false
		}
		st.URI, meta = p.URI, p.Meta
	default:
		return st, false
	}
	if meta != nil {
		st.Meta = metaCarrier(meta)
	}
	if extra := req.GetExtra(); extra != nil {
		st.Header = extra.Header
	}
	if r, ok := req.(interface{ ProtocolVersion() string }); ok {
		st.ProtocolVersion = r.ProtocolVersion()
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		st.Session = ss.ID()
	}
	return st, true
}

// tracedCall runs call, a tools/call that a path of toolc's answers
// without go-sdk's middleware (direct.go, stdiodirect.go), in the span
// that traceCalls gives go-sdk's calls.
func tracedCall(ctx context.Context, rt *runtime.Runtime, req *mcp.CallToolRequest, call func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if !rt.Tracing() {
		return call(ctx) // and read nothing of req for a span
	}
	st, ok := spanStart("tools/call", req)
	if !ok {
		return call(ctx)
	}
	ctx, span := rt.StartSpan(ctx, st)
	res, err := call(ctx)
	var result mcp.Result
	if res != nil {
		result = res
	}
	endSpan(span, result, err)
	return res, err
}

// endSpan ends the span of a tools/call, prompts/get or resources/read
// with the answer the MCP server sends.
func endSpan(span *runtime.Span, res mcp.Result, err error) {
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		span.EndRPCError(rpcErr.Code, rpcErr.Message)
		return
	case err != nil:
		span.End(nil, err)
		return
	}
	switch r := res.(type) {
	case *mcp.CallToolResult:
		span.EndResult(r.IsError, len(r.InputRequests) > 0)
	case *mcp.GetPromptResult:
		span.EndResult(false, len(r.InputRequests) > 0)
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
