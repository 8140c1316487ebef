package mcpserver

import (
	"context"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/runtime"
)

// drainAnswerWait bounds how long a session that drained waits for the
// answers it still has to write: a moment, as httpapi.Serve gives the
// answers of its drained calls, since the calls have ended; a request that
// go-sdk never answers must not hold up the exit.
const drainAnswerWait = time.Second

// ServeStdio serves srv, the MCP server of rt, over in and out (the
// standard input and output of a process that an MCP client started)
// until the client hangs up or ctx ends. When ctx ends it drains rt first
// (rt.Shutdown with shutdown), so that the session stays open until the
// calls in flight are answered, and then ends the session. It returns
// once the session is over, and the drain too if one began. A transport
// that fails ends the session as a client that hangs up does: there is no
// one left to tell.
func ServeStdio(ctx context.Context, rt *runtime.Runtime, srv *mcp.Server, in io.Reader, out io.Writer, shutdown runtime.ShutdownOptions) {
	// The session outlives ctx: it ends once the drain is over.
	session, endSession := context.WithCancel(context.Background())
	defer endSession()
	transport, filter := newStdioTransport(in, out)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		select {
		case <-ctx.Done():
			rt.Shutdown(shutdown)
			// The answers of the calls just drained, and of the requests
			// the gate held, may still be on their way out: go-sdk fails
			// every write once the session ends.
			filter.awaitAnswers(drainAnswerWait)
		case <-session.Done():
		}
		endSession()
	}()
	// Connect and Wait, not srv.Run: Run logs an ERROR ("server run
	// cancelled") whenever its context ends, and ending it is how the
	// session is closed after a drain. Waits for go-sdk: a Run that ends
	// quietly when its caller ends it.
	ss, err := srv.Connect(session, transport, nil)
	if err == nil {
		stop := context.AfterFunc(session, func() { ss.Close() })
		ss.Wait()
		stop()
	}
	endSession()
	<-drained
}
