package mcpserver

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
)

// drainAnswerWait bounds how long a session that drained waits for the
// answers it still has to write: a moment, as httpapi.Serve gives the
// answers of its drained calls, since the calls have ended; a request that
// go-sdk never answers must not hold up the exit.
const drainAnswerWait = time.Second

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// Shutdown says how rt drains when ctx ends.
	Shutdown runtime.ShutdownOptions
	// Tasks, if set, serves MCP's Tasks extension: the Manager of
	// Options.Tasks, whose tasks/* requests are answered over stdio as
	// over HTTP (see stdiotasks.go).
	Tasks *tasks.Manager
	// noDirect serves every line through go-sdk, without the direct
	// path (stdiodirect.go): the tests' reference.
	noDirect bool
	// filtered, if set, is told the session's filter: the tests' view.
	filtered func(*stdioFilter)
}

// ServeStdio serves srv, the MCP server of rt, over in and out (the
// standard input and output of a process that an MCP client started)
// until the client hangs up or ctx ends. When ctx ends it drains rt first
// (rt.Shutdown with opts.Shutdown), so that the session stays open until the
// calls in flight are answered, and then ends the session. It returns
// once the session is over, and the drain too if one began. A transport
// that fails ends the session as a client that hangs up does: there is no
// one left to tell.
func ServeStdio(ctx context.Context, rt *runtime.Runtime, srv *Server, in io.Reader, out io.Writer, opts StdioOptions) {
	shutdown := opts.Shutdown
	// The session outlives ctx: it ends once the drain is over.
	session, endSession := context.WithCancel(context.Background())
	defer endSession()
	transport, filter := newStdioTransport(session, in, out, opts.Tasks)
	if !opts.noDirect {
		filter.direct = newStdioDirect(rt, srv, filter)
	}
	if opts.filtered != nil {
		opts.filtered(filter)
	}
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
	news := newsFor(rt, srv.Server)
	// Connect and Wait, not srv.Run: Run logs an ERROR ("server run
	// cancelled") whenever its context ends, and ending it is how the
	// session is closed after a drain. Waits for go-sdk: a Run that ends
	// quietly when its caller ends it.
	ss, err := srv.Connect(session, transport, nil)
	news.session.Store(ss)
	if err == nil {
		if filter.direct != nil {
			filter.direct.session.Store(ss)
		}
		stop := context.AfterFunc(session, func() { ss.Close() })
		ss.Wait()
		stop()
	}
	if filter.direct != nil {
		// go-sdk's session waits for its calls to end; the path's too.
		filter.direct.stop()
		filter.direct.wait()
	}
	endSession()
	<-drained
}

// news keeps a stdio session from hearing list_changed about a tool list
// it has not seen change. The client connects, and is answered initialize,
// while the first load still runs, and go-sdk then sends list_changed for
// the tools that load adds, as for any change: right after connecting,
// before anything changed for the client, which asks for the list (held
// until the load is over) only now. A list_changed is sent only when the
// session was answered tools/list before the last swap: one that has
// never listed, or has listed since, has nothing stale to be told about.
//
// The time of the last swap is taken by a watcher of rt that runs after
// the MCP server's own (see New), once go-sdk's tools have changed, and a
// list's time when its answer is ready; a list computed just before a
// swap whose answer is ready after that swap's watchers ran counts as
// current, a window of the time it takes to return an answer.
type news struct {
	session atomic.Pointer[mcp.ServerSession] // the stdio session, once connected

	mu              sync.Mutex
	listed, swapped time.Time
}

func newsFor(rt *runtime.Runtime, srv *mcp.Server) *news {
	n := &news{}
	rt.OnSwap(func(*runtime.Snapshot) {
		n.mu.Lock()
		n.swapped = time.Now()
		n.mu.Unlock()
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" && n.ours(req) {
				n.mu.Lock()
				n.listed = time.Now()
				n.mu.Unlock()
			}
			return res, err
		}
	})
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/tools/list_changed" && n.ours(req) {
				n.mu.Lock()
				stale := !n.listed.IsZero() && n.listed.Before(n.swapped)
				n.mu.Unlock()
				if !stale {
					return nil, nil
				}
			}
			return next(ctx, method, req)
		}
	})
	return n
}

// ours reports whether req is of the stdio session: before Connect
// returns, the only session there can be.
func (n *news) ours(req mcp.Request) bool {
	ss := n.session.Load()
	return ss == nil || req.GetSession() == ss
}
