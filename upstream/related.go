package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
)

// A server's request over Streamable HTTP at 2025-11-25 names no call,
// but the server sends the requests a call makes on that call's own SSE
// stream, the response to its POST. toolc reads that stream as it passes
// and marks each elicitation/create, sampling/createMessage and
// roots/list on it with the call's id, under relatedKey in the request's
// _meta, so that the question reaches the caller of that call however
// many calls are in flight; askMiddleware removes the mark before the
// question goes on. A request that arrives elsewhere (stdio, the
// standalone stream) falls back to the one call in flight.

// relatedKey is the _meta key of the mark.
const relatedKey = "dev.toolc/relatedCall"

// maxRelatedLine bounds a line of a call's stream that toolc reads to
// mark it; a longer line passes unmarked.
const maxRelatedLine = 64 << 10

type callKey struct{}

// callIDOf returns the id of the call whose upstream request ctx is for.
func callIDOf(ctx context.Context) string {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		return c.id
	}
	return ""
}

// relatedBody is the SSE body of a call's POST, with the server's
// questions on it marked with the call's id.
type relatedBody struct {
	io.ReadCloser
	br      *bufio.Reader
	id      string
	out     []byte
	passing bool // the rest of a line over maxRelatedLine passes as it is
	err     error
}

func newRelatedBody(body io.ReadCloser, id string) *relatedBody {
	return &relatedBody{ReadCloser: body, br: bufio.NewReaderSize(body, maxRelatedLine), id: id}
}

func (b *relatedBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, err := b.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			b.out, b.passing = append(b.out[:0], line...), true
			err = nil
		case b.passing:
			b.out, b.passing = append(b.out[:0], line...), false
		default:
			b.out = append(b.out[:0], markLine(line, b.id)...)
		}
		b.err = err
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// questionMethods are the requests of a server that toolc passes on.
var questionMethods = [][]byte{[]byte(`"elicitation/create"`), []byte(`"sampling/createMessage"`), []byte(`"roots/list"`)}

// markLine returns an SSE line with, when it is the data of a question,
// the call's id in the question's _meta.
func markLine(line []byte, id string) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line
	}
	found := false
	for _, m := range questionMethods {
		if bytes.Contains(data, m) {
			found = true
			break
		}
	}
	if !found {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil || msg["id"] == nil {
		return line
	}
	var method string
	json.Unmarshal(msg["method"], &method)
	if method != "elicitation/create" && method != "sampling/createMessage" && method != "roots/list" {
		return line
	}
	params := map[string]json.RawMessage{}
	if len(msg["params"]) > 0 && json.Unmarshal(msg["params"], &params) != nil {
		return line
	}
	meta := map[string]any{}
	if len(params["_meta"]) > 0 && json.Unmarshal(params["_meta"], &meta) != nil {
		return line
	}
	meta[relatedKey] = id
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return line
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return line
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(append([]byte("data: "), out...), '\n')
}
