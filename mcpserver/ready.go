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
// the empty list of a runtime that has not loaded yet. A server whose
// load failed goes on answering with that error, so that a client can
// show it, rather than closing the connection or listing no tools.
type Gate struct {
	once sync.Once
	done chan struct{}

	mu  sync.Mutex
	err error
}

// NewGate returns a closed gate: it holds requests until Open.
func NewGate() *Gate { return &Gate{done: make(chan struct{})} }

// Open lets the held requests through, or, with err, answers them, and
// every request after, with it. A later Open replaces err: toolc dev,
// whose first load failed, opens the gate again once a reload succeeds.
func (g *Gate) Open(err error) {
	g.mu.Lock()
	g.err = err
	g.mu.Unlock()
	g.once.Do(func() { close(g.done) })
}

// Wait waits until the gate is open, or ctx ends, and returns why the
// load failed, or ctx's error, or nil.
func (g *Gate) Wait(ctx context.Context) error {
	select {
	case <-g.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// State reports whether the gate is open, and why the load failed if it
// did, without waiting: for a health check.
func (g *Gate) State() (open bool, err error) {
	select {
	case <-g.done:
	default:
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return true, g.err
}

// LoadError is the message of the error that a client gets from a server
// whose load failed with err.
func LoadError(err error) string {
	return fmt.Sprintf("the server could not load its tools: %v", err)
}

// held are the methods whose answer depends on the loaded tools, prompts
// and resources: before the load, a prompt would be "not found".
// subscriptions/listen is not held: a listener may subscribe during the
// load, and hears of the changes after it (over stdio, of those after it
// listed the tools: see news).
var held = map[string]bool{
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	methodListSkills: true, methodGetSkill: true, methodReadDir: true,
}

// Hold is the middleware that holds the held methods until Open, or until
// the request is cancelled.
func (g *Gate) Hold(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if held[method] {
			if err := g.Wait(ctx); ctx.Err() != nil {
				return nil, ctx.Err()
			} else if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: LoadError(err)}
			}
		}
		return next(ctx, method, req)
	}
}
