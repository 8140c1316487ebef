package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gate holds the MCP requests that need the tools until the first load of
// the catalog and handlers is over, so that a server can answer initialize,
// server/discover and ping while its handlers build. Clients give up on a
// server that does not answer the handshake within seconds (mcp-go's
// discover probe waits 5 s), and a cold build takes longer. Held requests
// get the real list, or, if the load failed, an error saying why: never
// the empty list of a runtime that has not loaded yet.
type Gate struct {
	once sync.Once
	done chan struct{}
	err  error
}

// NewGate returns a closed gate: it holds requests until Open.
func NewGate() *Gate { return &Gate{done: make(chan struct{})} }

// Open lets the held requests through, or, with err, answers them with it.
// Only the first call counts.
func (g *Gate) Open(err error) {
	g.once.Do(func() {
		g.err = err
		close(g.done)
	})
}

// held are the methods whose answer depends on the loaded tools.
// subscriptions/listen is not held: a listener may subscribe during the
// load, and hears of the changes after it (over stdio, of those after it
// listed the tools: see news).
var held = map[string]bool{"tools/list": true, "tools/call": true}

// Hold is the middleware that holds tools/list and tools/call until Open,
// or until the request is cancelled.
func (g *Gate) Hold(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if held[method] {
			select {
			case <-g.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if g.err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the server could not load its tools: %v", g.err)}
			}
		}
		return next(ctx, method, req)
	}
}
