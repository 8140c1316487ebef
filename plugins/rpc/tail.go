package rpc

import (
	"bytes"
	"strings"
	"sync"
)

// tail keeps the last tailSize bytes written to it: the end of a plugin's
// standard error, for the message about a plugin that died at start.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastWords sums up the end of a plugin's standard error in a line: a Go
// panic's message and where it happened, or else its last line.
func lastWords(stderr string) string {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic: ") && !strings.HasPrefix(l, "fatal error: ") {
			continue
		}
		msg := l
		// The first frame after "goroutine N [running]:" is the function
		// that panicked, and the next line its file and line.
		for j := i + 1; j+2 < len(lines); j++ {
			if strings.HasPrefix(lines[j], "goroutine ") {
				fn, _, _ := strings.Cut(lines[j+1], "(")
				at, _, _ := strings.Cut(strings.TrimSpace(lines[j+2]), " +0x")
				msg += " (in " + fn + ", " + at + ")"
				break
			}
		}
		return msg
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := string(bytes.TrimSpace([]byte(lines[i]))); l != "" {
			return l
		}
	}
	return ""
}
