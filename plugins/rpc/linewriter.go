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
// cannot grow the buffer without bound.
const maxLine = 64 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 && len(w.buf) < maxLine {
			return len(p), nil
		}
		if i < 0 {
			i = len(w.buf) - 1
		}
		line := w.buf[:i+1]
		w.mu.Lock()
		_, err := io.WriteString(w.out, w.prefix+string(bytes.TrimSuffix(line, []byte("\n")))+"\n")
		w.mu.Unlock()
		w.buf = w.buf[i+1:]
		if err != nil {
			return len(p), err
		}
	}
}
