package mcpserver

import (
	"context"
	"sync"
	"sync/atomic"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/jsondepth"
	"github.com/toolc/toolc/runtime"
)

// The direct path over stdio. go-sdk v1.8.0 serves each line of a stdio
// session through its jsonrpc2 connection: the line decoded again (with a
// 32 KiB decoder buffer for the message and another for its params), the
// generic dispatch and its middleware, a goroutine hand-off per call, and
// the answer encoded by its writer; for a call of a fast tool that is most
// of the call's CPU and of its garbage (BENCHMARKS.md, issue 27). The
// filter in front of go-sdk (stdio.go) already reads every line. It
// answers a plain tools/call itself, as direct.go does over HTTP: the
// same tool handler go-sdk calls (mcpTools.callTool), on the same
// session, the result amended as go-sdk amends it for the request's
// revision (sdkCallResult), encoded with go-sdk's encoder and written as
// one line, as go-sdk's writer writes it.
//
// Which lines: accept decides, before anything runs, and errs on go-sdk's
// side: a tools/call of a tool that go-sdk serves with the handler alone
// (as for HTTP: no task, deferred or x-mcp-header tool), with an id that
// is a number or a string and no other request of the session's holds or
// may still hold, once go-sdk has initialized the session and written its
// initialize answer, on a server without middleware added after New or a
// closed gate (with tracing, the path records each call's span, as
// traceCalls does). Of a session of 2025-06-18 or 2025-11-25, a
// request with no _meta, from a client that has not set a log level;
// of a session of 2026-07-28, a request whose _meta is the plain one
// direct.go takes (plainMeta: the revision, the client, its
// capabilities, which the handler's questions read from the request on
// either path). Everything else is go-sdk's, as before.
//
// A legacy session's client may have declared a capability a handler
// can ask something of (roots, sampling, elicitation; go-sdk's client
// declares roots as it comes). The handler's questions go out as at
// go-sdk: over go-sdk's session (asker.relay), while the call waits on
// its goroutine. go-sdk writes each question, with the next id of its
// own connection, and the client's answer, a line that is no request,
// goes on to go-sdk (check), which hands it to the question: the same
// lines, ids and order as go-sdk's own call's. Not for an upstream
// server's tool, though, as on the session path (sessdirect.go): the
// bridge keeps the upstream call open between rounds, and its call for a
// client that can be asked stays go-sdk's.
//
// A call on the path runs on a goroutine of its own, as go-sdk runs each
// call, so that the session reads on: a notifications/cancelled that
// names it cancels it (and goes on to go-sdk, for which the id is
// unknown), and its answer is written when it ends, as go-sdk writes a
// cancelled call's answer. When go-sdk's reader ends (the input's end,
// or the session's), the calls are cancelled and their answers dropped,
// as go-sdk cancels its calls and fails their writes then.
// TestStdioDirectIsGoSDK and FuzzStdioDirect hold the path to go-sdk's
// lines. Waits for go-sdk: a stdio session that answers a call without
// its generic machinery.

// stdioDirect is the direct path of one stdio session.
type stdioDirect struct {
	srv  *Server
	rt   *runtime.Runtime
	http *directPath // for plainTool, which is the same question
	f    *stdioFilter

	// session is go-sdk's, once Connect has returned it: the state
	// (initialize's params) that go-sdk answers by, and the session a
	// legacy call's handler gets.
	session atomic.Pointer[mcp.ServerSession]
	// levelSet is set once a logging/setLevel has gone to go-sdk: the
	// session's log lines are go-sdk's to filter from then on.
	levelSet atomic.Bool

	// ctx ends when go-sdk's reader does: the calls on the path end then.
	ctx context.Context
	end context.CancelFunc

	mu sync.Mutex
	// running are the calls on the path, by id (jsonrpc.ID.Raw), until
	// each has written its answer, cancelled or not.
	running map[any]context.CancelFunc
	wg      sync.WaitGroup

	// answered counts the calls the path answered, for the tests.
	answered atomic.Uint64
}

func newStdioDirect(rt *runtime.Runtime, srv *Server, f *stdioFilter) *stdioDirect {
	ctx, end := context.WithCancel(context.Background())
	f.out.before = f.initAnswer
	return &stdioDirect{
		srv: srv, rt: rt, http: &directPath{srv: srv, rt: rt}, f: f,
		ctx: ctx, end: end, running: map[any]context.CancelFunc{},
	}
}

// stdioCall is a call accept took.
type stdioCall struct {
	id     jsonrpc.ID
	params *mcp.CallToolParamsRaw
	// info is the serverInfo of a 2026-07-28 request's result, and
	// declared what its client declared it can be asked; nil and none for
	// a legacy session's request.
	info     *mcp.Implementation
	declared declared
}

// busy reports whether id is a call of the path's that was cancelled and
// has not answered: go-sdk holds the id of a call it runs until it has
// answered, and drops a request that reuses it without an answer.
func (d *stdioDirect) busy(id any) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.running[id]
	return ok
}

// accept reports whether the path answers req exactly as go-sdk would;
// f.mu is not held.
func (d *stdioDirect) accept(req *jsonrpc.Request) (stdioCall, bool) {
	var c stdioCall
	if req.Method != "tools/call" || !req.IsCall() {
		return c, false
	}
	ss := d.session.Load()
	if ss == nil || d.srv.added.Load() {
		return c, false
	}
	if g := d.srv.gate.Load(); g != nil {
		if open, err := g.State(); !open || err != nil {
			return c, false
		}
	}
	// What go-sdk knows of the session: initialized (a request before
	// that is answered with an error), its revision.
	init := ss.InitializeParams()
	if init == nil {
		return c, false
	}
	modern := init.ProtocolVersion >= modernRevision
	switch req.ID.Raw().(type) {
	case int64, string:
	default:
		return c, false
	}
	if jsondepth.Of(req.Params) > maxDirectDepth {
		return c, false
	}
	var params plainParams
	if !readExactly(req.Params, &params) {
		return c, false
	}
	meta := mcp.Meta(nil)
	switch {
	case modern && params.Meta != nil:
		var ok bool
		if c.declared, ok = plainMeta(params.Meta); !ok {
			return c, false
		}
		c.info, meta = d.srv.impl, modernMeta()
	case !modern && params.Meta == nil && !d.levelSet.Load():
	default:
		return c, false
	}
	d.f.mu.Lock()
	inited, answered, batches := d.f.inited, d.f.initAnswered, d.f.batches
	d.f.mu.Unlock()
	// An initialize that go-sdk has not answered yet, whose answer comes
	// before any other; a revision with batches, which go-sdk answers
	// whole; or a legacy session initialized other than by one initialize
	// line, which the filter did not follow.
	if inited && !answered || batches || !modern && !inited {
		return c, false
	}
	p, ok := params.call(meta)
	if !ok || !plainName(p.Name) || !d.http.plainTool(p.Name, nil) {
		return c, false
	}
	// A legacy session's client that can be asked: its questions go out
	// over the session, as at go-sdk, but an upstream server's tool stays
	// go-sdk's (see the top of the file).
	if !modern && !asksNothing(ss) && !d.http.replayable(p.Name) {
		return c, false
	}
	c.id, c.params = req.ID, p
	return c, true
}

// start runs a call that accept took, which the filter counts in flight.
func (d *stdioDirect) start(c stdioCall) {
	ctx, cancel := context.WithCancel(d.ctx)
	d.mu.Lock()
	if d.ctx.Err() != nil {
		// The session is over (a line read as it closed): go-sdk
		// answers nothing now, and ServeStdio may be waiting for the
		// path's calls already.
		d.mu.Unlock()
		cancel()
		d.f.mu.Lock()
		d.f.settle(c.id.Raw())
		d.f.mu.Unlock()
		return
	}
	d.running[c.id.Raw()] = cancel
	d.wg.Add(1)
	d.mu.Unlock()
	go func() {
		defer d.wg.Done()
		defer cancel()
		line := d.call(ctx, c)
		d.mu.Lock()
		delete(d.running, c.id.Raw())
		d.mu.Unlock()
		// go-sdk writes nothing once its reader has ended.
		if line != nil && d.ctx.Err() == nil {
			d.answered.Add(1)
			d.f.out.answer(line)
		}
		d.f.mu.Lock()
		d.f.settle(c.id.Raw())
		d.f.mu.Unlock()
	}()
}

// call runs the tool and returns go-sdk's answer line; nil where go-sdk
// writes none (a result it cannot encode).
func (d *stdioDirect) call(ctx context.Context, c stdioCall) []byte {
	req := &mcp.CallToolRequest{Params: c.params}
	var onEvent func(runtime.Event)
	if c.info == nil {
		// A legacy session's call: the handler's session is go-sdk's, whose
		// capabilities and revision it reads, and its log lines go to the
		// session as go-sdk's handler sends them (none, as no level is
		// set).
		req.Session = d.session.Load()
		onEvent = d.srv.tools.events(ctx, req)
	} else {
		// A 2026-07-28 request, as direct.go serves one: no session (the
		// handler's questions go back in the result, and read the
		// capabilities from the request), no progress and no log lines
		// asked for.
		ctx = withDeclared(ctx, c.declared)
		onEvent = func(runtime.Event) {}
	}
	res, err := tracedCall(ctx, d.rt, req, func(ctx context.Context) (*mcp.CallToolResult, error) {
		return d.srv.tools.callTool(ctx, c.params.Name, req, onEvent)
	})
	resp := &jsonrpc.Response{ID: c.id, Error: err}
	if err == nil {
		out, err := sdkCallResult(res, c.info)
		if err != nil {
			resp.Error = err
		} else if resp.Result, err = out.MarshalJSON(); err != nil {
			return nil
		}
	}
	line, err := appendResponse(make([]byte, 0, len(resp.Result)+64), resp)
	if err != nil {
		return nil
	}
	return append(line, '\n')
}

// cancel cancels the path's call that a notifications/cancelled names,
// read as go-sdk reads it; f.mu is held.
func (d *stdioDirect) cancel(req *jsonrpc.Request) {
	var p mcp.CancelledParams
	if jsondepth.Of(req.Params) > 1000 {
		return
	}
	if _, err := fastjson.Parse(req.Params, &p, fastjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	d.mu.Lock()
	cancel := d.running[id.Raw()]
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// stop ends the path with go-sdk's reader: the calls running are
// cancelled, and their answers dropped.
func (d *stdioDirect) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.end() // under mu: no call starts after it, for wait
}

// wait waits for the path's calls to end.
func (d *stdioDirect) wait() { d.wg.Wait() }
