package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/tasks"
)

// MaxStdioLine bounds one line of MCP over stdio, as go-sdk's own default
// does: a longer line is answered with a parse error and skipped, never
// buffered whole.
const MaxStdioLine = mcp.DefaultMaxLineLength

// NewStdioTransport returns the MCP transport of `toolc serve --stdio`:
// go-sdk's newline-delimited JSON-RPC over in and out, behind a filter that
// answers a line which is no JSON-RPC message with -32700 (not JSON) or
// -32600 (not a valid request) and reads on, as JSON-RPC 2.0 says. go-sdk's
// transport ends the session at such a line, and every call in flight with
// it: its decoder reads one JSON stream, which it cannot pick up again
// after a syntax error, and any message it cannot decode is fatal. The
// filter hands it only lines that it decodes, so go-sdk keeps the rest:
// sessions, batches in the revisions that have them, and the framing.
// Waits for go-sdk: a transport that answers a bad line and reads on,
// answers a batch that holds a notification, and answers the requests it
// has read when its input ends (see stdioFilter).
func NewStdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	t, _ := newStdioTransport(context.Background(), in, out, nil)
	return t
}

// newStdioTransport is NewStdioTransport, and the filter under it, which
// knows which requests go-sdk has not answered yet, and serves the Tasks
// extension with m, if set, for the session of ctx.
func newStdioTransport(ctx context.Context, in io.Reader, out io.Writer, m *tasks.Manager) (mcp.Transport, *stdioFilter) {
	w := &lockedWriter{w: out}
	f := &stdioFilter{
		in: bufio.NewReaderSize(in, 64<<10), out: w, batchIDs: map[any]bool{},
		inflight: map[any]int{}, sdkCancelled: map[any]bool{}, closed: make(chan struct{}), eofWait: StdioEOFWait,
	}
	w.onWrite = f.written
	if m != nil {
		f.tasks = &stdioTasks{m: m, out: w, ctx: ctx, listens: map[string]*stdioListen{}}
		w.edit = f.tasks.edit
	}
	// The filter bounds lines; go-sdk's own limit would count its
	// decoder's read-ahead too.
	return &mcp.IOTransport{Reader: f, Writer: w, MaxLineLength: -1}, f
}

// lockedWriter serializes the filter's answers with go-sdk's messages: each
// Write is one whole line from either.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	onWrite func(line []byte) // sees go-sdk's lines, not the filter's
	// before, if set, sees each of go-sdk's lines before it is written.
	before func(line []byte)
	// edit, if set, is what each of go-sdk's lines becomes before it is
	// written (stdioTasks.edit); nil holds it back, for release.
	edit func(line []byte) []byte
}

// Write is go-sdk's: one message, or one batch, and its newline.
func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.before != nil {
		w.before(p)
	}
	out := p
	if w.edit != nil {
		if out = w.edit(p); out == nil {
			return len(p), nil
		}
	}
	n, err := w.w.Write(out)
	if w.onWrite != nil {
		w.onWrite(p)
	}
	if err == nil {
		n = len(p)
	}
	return n, err
}

// release writes a line of go-sdk's that edit held back.
func (w *lockedWriter) release(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.w.Write(p)
	if w.onWrite != nil {
		w.onWrite(p)
	}
}

// line writes one of toolc's own messages, and its newline.
func (w *lockedWriter) line(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(append(bytes.Clone(msg), '\n'))
	return err
}

// answer writes one of the filter's own lines.
func (w *lockedWriter) answer(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// A client that stopped reading fails go-sdk's next write as well;
	// the filter has no one to tell.
	_, _ = w.w.Write(p)
}

func (w *lockedWriter) Close() error { return nil }

// stdioFilter is the io.Reader that go-sdk's transport decodes: the input
// with every line that go-sdk would fail on taken out and answered.
type stdioFilter struct {
	tasks   *stdioTasks  // nil: no Tasks extension
	direct  *stdioDirect // nil: every line is go-sdk's (see stdiodirect.go)
	in      *bufio.Reader
	out     *lockedWriter
	pending []byte // the rest of the current valid line, with its newline
	err     error  // of the input, once pending is drained

	mu sync.Mutex
	// batchIDs are the request IDs of batches go-sdk has not answered yet:
	// go-sdk fails a session on a batch that reuses one.
	batchIDs map[any]bool
	// batches says whether the session may batch: go-sdk fails a session on
	// a batch once it has negotiated 2025-06-18 or later.
	batches bool
	inited  bool
	// initID is the id of the session's first initialize, and
	// initAnswered whether go-sdk has written its answer: go-sdk handles
	// the requests after an initialize once it has answered it, so the
	// direct path, which could answer sooner, waits for that too.
	initID       any
	initAnswered bool

	// inflight counts the requests handed to go-sdk and not answered
	// yet, by ID. go-sdk fails every write once its reader has ended, so
	// the end of the input is held back until they are answered: a client
	// that pipes its requests in and closes standard input still gets
	// every answer, as it would from a server that reads no further ahead.
	inflight map[any]int
	// sdkCancelled are the requests of go-sdk's that a
	// notifications/cancelled named before go-sdk answered them: go-sdk
	// holds their ids until it does, which the direct path must not take.
	sdkCancelled map[any]bool
	idle         chan struct{} // closed when inflight empties, while the end waits
	eofWait      time.Duration // StdioEOFWait, but in tests
	closed       chan struct{} // closed by Close: go-sdk is done with the session
	once         sync.Once
}

// Close ends a Read that holds back the end of the input: the session is
// over (its context ended), and its answers are no longer wanted.
func (f *stdioFilter) Close() error {
	f.once.Do(func() { close(f.closed) })
	if f.direct != nil {
		f.direct.stop()
	}
	return nil
}

func (f *stdioFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			f.awaitAnswers(f.eofWait)
			if f.direct != nil {
				f.direct.stop() // go-sdk's reader ends here
			}
			return 0, f.err
		}
		line, err := f.readLine()
		if err != nil {
			f.err = err
		}
		if line == nil {
			continue
		}
		msg, pass := f.check(line)
		if msg != nil {
			f.answer(msg)
			continue
		}
		if pass == nil {
			continue // the direct path's, or dropped
		}
		f.pending = append(pass, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// StdioEOFWait bounds how long the end of the input waits for the answers
// to the requests before it: a call runs no longer than its timeout (30s
// by default), and a request that go-sdk never answers must not keep the
// process alive.
const StdioEOFWait = time.Minute

// awaitAnswers waits until go-sdk has answered every request it was
// handed, the session is closed, or limit has passed.
func (f *stdioFilter) awaitAnswers(limit time.Duration) {
	f.mu.Lock()
	if len(f.inflight) == 0 {
		f.mu.Unlock()
		return
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-idle:
	case <-f.closed:
	case <-t.C:
	}
}

// track counts the requests of a line handed to go-sdk, and forgets the
// one that a notifications/cancelled names: MCP has no answer to it.
func (f *stdioFilter) track(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.IsCall() {
		f.inflight[req.ID.Raw()]++
		return
	}
	f.cancelled(req)
}

// cancelled forgets the request that a notifications/cancelled names,
// and cancels it if it is the direct path's; f.mu is held.
func (f *stdioFilter) cancelled(req *jsonrpc.Request) {
	if req.Method != "notifications/cancelled" {
		return
	}
	if f.direct != nil {
		f.direct.cancel(req)
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) == nil {
		id := normalID(p.RequestID)
		if f.direct != nil && f.inflight[id] > 0 && !f.direct.busy(id) {
			f.sdkCancelled[id] = true
		}
		f.settle(id)
	}
}

// settle marks one request with the ID as answered; f.mu is held.
func (f *stdioFilter) settle(id any) {
	n, ok := f.inflight[id]
	if !ok {
		return
	}
	if n > 1 {
		f.inflight[id] = n - 1
		return
	}
	delete(f.inflight, id)
	if len(f.inflight) == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// written settles the requests that a line of go-sdk's answers, and frees
// a batch's request IDs for reuse.
func (f *stdioFilter) written(line []byte) {
	var ids []any
	if line = bytes.TrimSpace(line); len(line) > 0 && line[0] == '[' {
		var resps []struct {
			ID     any              `json:"id"`
			Method *json.RawMessage `json:"method"`
		}
		if json.Unmarshal(line, &resps) != nil {
			return
		}
		for _, r := range resps {
			if r.Method == nil && r.ID != nil {
				ids = append(ids, normalID(r.ID))
			}
		}
		f.mu.Lock()
		for _, id := range ids {
			delete(f.batchIDs, id)
		}
		f.mu.Unlock()
	} else {
		msg, err := decodeMessage(line)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			return // a request or notification of the server's
		}
		ids = append(ids, resp.ID.Raw())
	}
	f.mu.Lock()
	for _, id := range ids {
		f.settle(id)
		delete(f.sdkCancelled, id)
	}
	f.mu.Unlock()
}

// initAnswer notes go-sdk's answer to the session's initialize, as it
// is written: the direct path, which waits for it, may answer once it is
// on its way out (its own lines queue behind it, for the writer's lock).
func (f *stdioFilter) initAnswer(line []byte) {
	f.mu.Lock()
	waiting, initID := f.inited && !f.initAnswered, f.initID
	f.mu.Unlock()
	if !waiting {
		return
	}
	var m struct {
		ID     any              `json:"id"`
		Method *json.RawMessage `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != nil || normalID(m.ID) != initID {
		return
	}
	f.mu.Lock()
	f.initAnswered = true
	f.mu.Unlock()
}

// normalID holds a decoded JSON id as jsonrpc.ID.Raw does: a number as an
// int64, a string as itself.
func normalID(id any) any {
	if x, ok := id.(float64); ok {
		return int64(x)
	}
	return id
}

// readLine returns the next line, without its line ending, or nil for a
// blank one. A line over MaxStdioLine is answered and skipped here.
func (f *stdioFilter) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		if len(line)+len(chunk) > MaxStdioLine {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = f.in.ReadSlice('\n')
			}
			f.answer(rpcError(nil, -32700, fmt.Sprintf("Parse error: a message is longer than %d bytes", MaxStdioLine)))
			return nil, eofOnly(err)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return nil, eofOnly(err)
		}
		return line, eofOnly(err)
	}
}

// eofOnly passes on the input's end or failure, and nothing else.
func eofOnly(err error) error {
	if err == nil || errors.Is(err, bufio.ErrBufferFull) {
		return nil
	}
	return err
}

// check returns the answer to a line that go-sdk must not see, or else
// what to hand go-sdk for the line.
func (f *stdioFilter) check(line []byte) (answer, pass []byte) {
	if !json.Valid(line) {
		return rpcError(nil, -32700, "Parse error: the line is not JSON; send one JSON-RPC message per line"), nil
	}
	// The filter of /mcp's bodies too (rejectAmbiguous): a key twice, or
	// two that differ only in case, would be read one way by go-sdk and
	// another by a reader in front.
	if problem, code, ok := ambiguousKey(line); ok {
		return rpcError(idOf(line), code, problem), nil
	}
	if line[0] != '[' {
		msg, err := decodeMessage(line)
		if err != nil {
			return rpcError(idOf(line), -32600, "Invalid Request: "+err.Error()), nil
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && f.inUse(req.ID.Raw()) {
			// go-sdk would answer it with a null id, and count the
			// request in flight twice; the answer names no id either, as
			// the id is the other request's.
			return rpcError(nil, -32600, fmt.Sprintf("Invalid Request: request ID %v is in use by a request in flight", req.ID.Raw())), nil
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && f.direct != nil && f.direct.busy(req.ID.Raw()) {
			// The id of a call of the direct path's that was cancelled
			// and has not answered: go-sdk drops such a request
			// unanswered (its jsonrpc2 holds the id until the answer).
			return nil, nil
		}
		if req, ok := msg.(*jsonrpc.Request); ok && f.tasks != nil {
			if answer, ok := f.tasks.request(req, line); ok {
				return answer, nil
			}
		}
		if req, ok := msg.(*jsonrpc.Request); ok && f.direct != nil {
			if c, ok := f.direct.accept(req); ok && !f.sdkHolds(req.ID.Raw()) {
				f.track(msg)
				f.direct.start(c)
				return nil, nil
			}
		}
		f.note(msg)
		f.track(msg)
		return nil, line
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
		return rpcError(nil, -32600, "Invalid Request: an empty batch"), nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.batches && f.inited {
		return rpcError(nil, -32600, "Invalid Request: this session's MCP revision has no batches; send one message per line"), nil
	}
	var (
		ids           []any
		notes, others [][]byte
	)
	seen := map[any]bool{}
	for _, raw := range elems {
		msg, err := decodeMessage(raw)
		if err != nil {
			return rpcError(nil, -32600, "Invalid Request: a message of the batch: "+err.Error()), nil
		}
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case ok && req.IsCall():
			id := req.ID.Raw()
			// A cancelled call of the direct path's that has not
			// answered holds its id, as go-sdk's do.
			if seen[id] || f.batchIDs[id] || f.inflight[id] > 0 || f.direct != nil && f.direct.busy(id) {
				return rpcError(nil, -32600, fmt.Sprintf("Invalid Request: request ID %v is in use", id)), nil
			}
			if req.Method == "logging/setLevel" && f.direct != nil {
				f.direct.levelSet.Store(true)
			}
			seen[id] = true
			ids = append(ids, id)
			others = append(others, raw)
		case ok:
			notes = append(notes, raw)
			f.cancelled(req)
		default:
			others = append(others, raw) // a response to a request of the server's
		}
	}
	for _, id := range ids {
		f.batchIDs[id] = true
		f.inflight[id]++
	}
	if len(notes) == 0 {
		return nil, line
	}
	// go-sdk v1.8.0 counts a batch's notifications among the requests it
	// must answer, and so never answers a batch that holds one. JSON-RPC
	// lets a server take a batch's messages in any order, and answers no
	// notification: go-sdk gets the notifications one per line, then the
	// batch of the rest.
	pass = bytes.Join(notes, []byte("\n"))
	if len(others) > 0 {
		pass = append(pass, "\n["...)
		pass = append(pass, bytes.Join(others, []byte(","))...)
		pass = append(pass, ']')
	}
	return nil, pass
}

// inUse reports whether a request with the id is in flight.
func (f *stdioFilter) inUse(id any) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inflight[id] > 0 || f.batchIDs[id]
}

// note follows initialize: go-sdk takes batches only in the revisions
// before 2025-06-18, and serves its latest revision to a client that asks
// for one it does not know; and a logging/setLevel, after which the direct
// path leaves the session's calls to go-sdk.
func (f *stdioFilter) note(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if ok && req.Method == "logging/setLevel" && f.direct != nil {
		f.direct.levelSet.Store(true)
	}
	if !ok || req.Method != "initialize" {
		return
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(req.Params, &p)
	f.mu.Lock()
	if !f.inited {
		f.initID = req.ID.Raw()
	}
	f.inited = true
	f.batches = p.ProtocolVersion == "2024-11-05" || p.ProtocolVersion == "2025-03-26"
	f.mu.Unlock()
}

// sdkHolds reports whether go-sdk may still hold a request with the id:
// one it was handed, that was cancelled, and that it has not answered.
func (f *stdioFilter) sdkHolds(id any) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sdkCancelled[id]
}

func (f *stdioFilter) answer(msg []byte) { f.out.answer(msg) }

// rpcError encodes a JSON-RPC error response line; a nil id is null, as
// JSON-RPC wants when the request's id could not be read.
func rpcError(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return append(b, '\n')
}
