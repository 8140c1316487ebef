package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// sniffBytes is how much of a file decides whether it is text.
const sniffBytes = 8 << 10

// isText reports whether b, the start of a file, is UTF-8 text without NUL
// bytes. A rune cut off at the end of b does not count against it.
func isText(b []byte) bool {
	c := textCheck{text: true}
	c.Write(b)
	return c.isText(true)
}

// textCheck is a writer that checks that the bytes written to it are
// UTF-8 text without NUL bytes, a rune cut between two writes included.
type textCheck struct {
	text    bool
	pending []byte // an incomplete rune at the end of the last write
}

func (c *textCheck) Write(b []byte) (int, error) {
	if c.text {
		buf := append(c.pending, b...)
		n := len(buf)
		for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
			if utf8.RuneStart(buf[i]) {
				if !utf8.FullRune(buf[i:]) {
					n = i
				}
				break
			}
		}
		c.text = bytes.IndexByte(buf, 0) < 0 && utf8.Valid(buf[:n])
		c.pending = append(c.pending[:0], buf[n:]...)
	}
	return len(b), nil
}

// isText reports the verdict once everything is written; partial says that
// the writes were only the start of the file, which may cut a rune.
func (c *textCheck) isText(partial bool) bool {
	return c.text && (partial || len(c.pending) == 0)
}

// textReader returns a reader of r that has checked, without consuming
// them, that r's first bytes are text.
func textReader(r io.Reader) (*bufio.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, false, err
	}
	return br, isText(head), nil
}

// lineReader reads lines of any length, keeping at most max bytes of each,
// so that a huge line costs no memory.
type lineReader struct {
	r   *bufio.Reader
	max int
}

// next returns the next line without its line ending (\n or \r\n), cut to
// max bytes; it returns false at the end of the input.
func (lr *lineReader) next() ([]byte, bool, error) {
	var line []byte
	read := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		read = read || len(chunk) > 0
		if room := lr.max - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line, []byte("\n"))
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case !errors.Is(err, io.EOF):
			return nil, false, err
		case !read:
			return nil, false, nil
		}
		return bytes.TrimSuffix(line, []byte("\r")), true, nil
	}
}

// cut returns s cut to n characters.
func cut(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
