package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// schemaTap reads a server's messages as they pass, to keep the tools'
// schemas as the server wrote them: go-sdk decodes a schema into a map,
// which loses the order of its properties, and toolc import keeps the
// server's order. Only List taps; a served upstream is not read twice.
type schemaTap struct {
	max int

	mu   sync.Mutex
	buf  []byte
	skip bool // the line under way is over max: it is passed, not kept
	raw  map[string]rawSchemas
}

type rawSchemas struct{ in, out json.RawMessage }

func newSchemaTap(max int) *schemaTap {
	return &schemaTap{max: max, raw: map[string]rawSchemas{}}
}

// reader returns r, with what is read from it fed to the tap.
func (t *schemaTap) reader(r io.Reader) io.Reader { return &tapReader{r: r, t: t} }

type tapReader struct {
	r io.Reader
	t *schemaTap
}

func (r *tapReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.t.feed(p[:n])
	return n, err
}

// feed takes the next bytes of the stream: newline-delimited JSON over
// stdio, or an HTTP body, JSON or server-sent events ("data: {...}").
func (t *schemaTap) feed(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !t.skip {
				t.buf = append(t.buf, b...)
				if len(t.buf) > t.max {
					t.buf, t.skip = t.buf[:0], true
				}
			}
			return
		}
		if !t.skip {
			t.buf = append(t.buf, b[:i]...)
			t.line(t.buf)
		}
		t.buf, t.skip = t.buf[:0], false
		b = b[i+1:]
	}
}

// end takes what is left at the end of a body without a final newline.
func (t *schemaTap) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.skip && len(t.buf) > 0 {
		t.line(t.buf)
	}
	t.buf, t.skip = t.buf[:0], false
}

func (t *schemaTap) line(l []byte) {
	l = bytes.TrimPrefix(bytes.TrimSpace(l), []byte("data:"))
	if !bytes.Contains(l, []byte(`"tools"`)) {
		return
	}
	var msg struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(l, &msg) != nil {
		return
	}
	for _, tool := range msg.Result.Tools {
		t.raw[tool.Name] = rawSchemas{in: tool.InputSchema, out: tool.OutputSchema}
	}
}

// schemas returns the raw schemas of a tool, if the tap saw them.
func (t *schemaTap) schemas(name string) (rawSchemas, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.raw[name]
	return r, ok
}

// tapBody is an HTTP body fed to a tap.
type tapBody struct {
	io.ReadCloser
	t *schemaTap
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.t.feed(p[:n])
	if err == io.EOF {
		b.t.end()
	}
	return n, err
}
