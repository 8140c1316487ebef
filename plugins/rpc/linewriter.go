package rpc

import (
	"bytes"
	"io"
	"sync"
)

// lineWriter writes whole lines to out, each prefixed, so that the output
// of several plugins (and of a plugin's several streams) interleaves by
// line, never within one. Writes to one lineWriter come from one goroutine;
// mu is shared by the writers of one out.
type lineWriter struct {
	mu     *sync.Mutex
	out    io.Writer
	prefix string
	buf    []byte
}

// maxLine is where a line without a newline is cut, so that a plugin
// cannot grow the buffer, or one line of the output, without bound.
const maxLine = 64 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		// Take up to the next newline, and never more than the line has
		// room for: one write of any size is cut into lines of maxLine.
		take := min(len(p), maxLine-len(w.buf))
		if i := bytes.IndexByte(p[:take], '\n'); i >= 0 {
			take = i + 1
		}
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		if w.buf[len(w.buf)-1] != '\n' && len(w.buf) < maxLine {
			continue
		}
		w.mu.Lock()
		_, err := io.WriteString(w.out, w.prefix+string(bytes.TrimSuffix(w.buf, []byte("\n")))+"\n")
		w.mu.Unlock()
		w.buf = w.buf[:0]
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
