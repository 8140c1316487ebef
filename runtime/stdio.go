package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
func NewStdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	f := &stdioFilter{in: bufio.NewReaderSize(in, 64<<10), out: w, batchIDs: map[any]bool{}}
	w.onBatch = f.batchAnswered
	// The filter bounds lines; go-sdk's own limit would count its
	// decoder's read-ahead too.
	return &mcp.IOTransport{Reader: io.NopCloser(f), Writer: w, MaxLineLength: -1}
}

// lockedWriter serializes the filter's answers with go-sdk's messages: each
// Write is one whole line from either.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	onBatch func(line []byte)
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) > 0 && p[0] == '[' && w.onBatch != nil {
		w.onBatch(p) // a batch's responses: its IDs are free again
	}
	return w.w.Write(p)
}

func (w *lockedWriter) Close() error { return nil }

// stdioFilter is the io.Reader that go-sdk's transport decodes: the input
// with every line that go-sdk would fail on taken out and answered.
type stdioFilter struct {
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
}

func (f *stdioFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.readLine()
		if err != nil {
			f.err = err
		}
		if line == nil {
			continue
		}
		if msg := f.check(line); msg != nil {
			f.answer(msg)
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
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

// check returns the answer to a line that go-sdk must not see, or nil.
func (f *stdioFilter) check(line []byte) []byte {
	if !json.Valid(line) {
		return rpcError(nil, -32700, "Parse error: the line is not JSON; send one JSON-RPC message per line")
	}
	if line[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return rpcError(idOf(line), -32600, "Invalid Request: "+err.Error())
		}
		f.note(msg)
		return nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
		return rpcError(nil, -32600, "Invalid Request: an empty batch")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.batches && f.inited {
		return rpcError(nil, -32600, "Invalid Request: this session's MCP revision has no batches; send one message per line")
	}
	var ids []any
	seen := map[any]bool{}
	for _, raw := range elems {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return rpcError(nil, -32600, "Invalid Request: a message of the batch: "+err.Error())
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			id := req.ID.Raw()
			if seen[id] || f.batchIDs[id] {
				return rpcError(nil, -32600, fmt.Sprintf("Invalid Request: request ID %v is in use", id))
			}
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		f.batchIDs[id] = true
	}
	return nil
}

// note follows initialize: go-sdk takes batches only in the revisions
// before 2025-06-18, and serves its latest revision to a client that asks
// for one it does not know.
func (f *stdioFilter) note(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" {
		return
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(req.Params, &p)
	f.mu.Lock()
	f.inited = true
	f.batches = p.ProtocolVersion == "2024-11-05" || p.ProtocolVersion == "2025-03-26"
	f.mu.Unlock()
}

// batchAnswered frees the request IDs of a batch that go-sdk answered.
func (f *stdioFilter) batchAnswered(line []byte) {
	var resps []struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &resps) != nil {
		return
	}
	f.mu.Lock()
	for _, r := range resps {
		id := r.ID
		if x, ok := id.(float64); ok {
			id = int64(x) // as jsonrpc.ID.Raw holds a number
		}
		delete(f.batchIDs, id)
	}
	f.mu.Unlock()
}

func (f *stdioFilter) answer(msg []byte) {
	// A client that stopped reading fails go-sdk's next write as well;
	// the filter has no one to tell.
	_, _ = f.out.Write(msg)
}

// idOf returns the id of a JSON object, when it is one that JSON-RPC
// allows (a string or a number), for the answer to an invalid request.
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if c := m.ID[0]; c == '"' || c == '-' || c >= '0' && c <= '9' {
		return m.ID
	}
	return nil
}

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
