package diag

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Printable returns s with every character that a terminal would act on
// rather than show replaced by U+FFFD: control characters but tab and
// newline, the bidirectional overrides and isolates that reorder what is
// shown ("Trojan Source"), and bytes that are no UTF-8. A source line, a
// message or a file name may come from a contract that is someone else's:
// a comment holding ESC ] 52 would otherwise write to the clipboard of
// whoever runs toolc on it, and ESC [ 2 J clear their screen. One
// character stands for one, so that a caret under a line still lines up.
//
// It is the one sanitiser of toolc's terminal output: Print's text and
// GitHub formats use it, and NewPrintableWriter applies it to a stream.
func Printable(s string) string {
	if strings.IndexFunc(s, unprintable) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unprintable(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func unprintable(r rune) bool {
	switch {
	case r == '\t', r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == utf8.RuneError:
		return true // a byte that is no UTF-8, such as 0x9b, a C1 CSI to an 8-bit terminal
	}
	return false
}

// NewPrintableWriter returns a writer that writes what it is given to w
// through Printable: for a stream such as standard error, whose lines
// carry file names and contract text from many places. A character split
// between two writes is kept until the second; Flush writes what is kept
// at the end of the stream. It is safe for concurrent use.
func NewPrintableWriter(w io.Writer) *PrintableWriter {
	return &PrintableWriter{w: w}
}

// PrintableWriter is the writer that NewPrintableWriter returns.
type PrintableWriter struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // the start of a character that the next write ends
}

// Write writes p through Printable, and reports len(p) on success.
func (pw *PrintableWriter) Write(p []byte) (int, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	buf := append(pw.tail, p...)
	pw.tail = nil
	// Keep back the start of a character that is not complete yet: at
	// most utf8.UTFMax-1 bytes that could begin one.
	for i := 1; i < utf8.UTFMax && i <= len(buf); i++ {
		if start := len(buf) - i; utf8.RuneStart(buf[start]) {
			if !utf8.FullRune(buf[start:]) {
				pw.tail = append([]byte(nil), buf[start:]...)
				buf = buf[:start]
			}
			break
		}
	}
	if _, err := io.WriteString(pw.w, Printable(string(buf))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the start of a character that the stream ended in the
// middle of, as U+FFFD.
func (pw *PrintableWriter) Flush() error {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if len(pw.tail) == 0 {
		return nil
	}
	tail := pw.tail
	pw.tail = nil
	_, err := io.WriteString(pw.w, Printable(string(tail)))
	return err
}
