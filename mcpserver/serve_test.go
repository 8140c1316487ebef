package mcpserver_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// TestServeStdioAnswersBeforeEnding: when ServeStdio's context ends, the
// session stays open after the drain until the answers still on their way
// out are written. A tools/list that a gate held until the load failed is
// answered just as toolc serve --stdio ends; ending the session at once
// made go-sdk drop that answer, and the client waited for it in vain.
func TestServeStdioAnswersBeforeEnding(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	srv := mcpserver.New(rt, mcpserver.Options{})
	held, release := make(chan struct{}), make(chan struct{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			close(held)
			<-release
			// The answer is still being made when the drain is over.
			time.Sleep(200 * time.Millisecond)
			return next(ctx, method, req)
		}
	})
	in, client := io.Pipe()
	defer client.Close()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	go func() {
		defer close(served)
		mcpserver.ServeStdio(ctx, rt, srv, in, out, mcpserver.StdioOptions{Shutdown: runtime.ShutdownOptions{Grace: time.Second}})
	}()
	io.WriteString(client, strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n")+"\n")
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatalf("tools/list never reached the server; it wrote:\n%s", out)
	}
	close(release)
	cancel() // a signal, or the load that failed
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after the drain")
	}
	if !strings.Contains(out.String(), `"id":2,"result"`) {
		t.Errorf("the held tools/list was not answered before the session ended; the server wrote:\n%s", out)
	}
}
