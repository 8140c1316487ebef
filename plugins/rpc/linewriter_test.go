package rpc

import (
	"strings"
	"sync"
	"testing"
)

func TestLineWriterPrefixesWholeLines(t *testing.T) {
	var out strings.Builder
	var mu sync.Mutex
	w := &lineWriter{mu: &mu, out: &out, prefix: "[svc] "}
	for _, s := range []string{"one", "\n", "two\nthr", "ee\n", "no newline yet"} {
		w.Write([]byte(s))
	}
	if got, want := out.String(), "[svc] one\n[svc] two\n[svc] three\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	w.Write([]byte(strings.Repeat("x", maxLine)))
	if n := strings.Count(out.String(), "\n"); n != 4 {
		t.Errorf("an over-long line was not cut: %d lines", n)
	}
}

// TestLineWriterCutsOneLargeWrite holds a single write far over maxLine,
// with no newline or with one past maxLine, to lines of maxLine at most:
// a plugin that writes 1 MiB at once gets no 1 MiB line in toolc's log.
func TestLineWriterCutsOneLargeWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write string
		lines int // whole lines written, including the cut ones
		left  int // bytes kept for the line under way
	}{
		{"no newline", strings.Repeat("x", 3*maxLine+10), 3, 10},
		{"newline past maxLine", strings.Repeat("y", 2*maxLine+5) + "\nz", 3, 1},
		{"exact fit", strings.Repeat("w", maxLine), 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			var mu sync.Mutex
			w := &lineWriter{mu: &mu, out: &out, prefix: "[p] "}
			if n, err := w.Write([]byte(tc.write)); n != len(tc.write) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			lines := strings.SplitAfter(out.String(), "\n")
			lines = lines[:len(lines)-1] // after the last newline: ""
			if len(lines) != tc.lines {
				t.Errorf("%d lines, want %d", len(lines), tc.lines)
			}
			for i, l := range lines {
				if len(l) > len("[p] ")+maxLine+1 {
					t.Errorf("line %d is %d bytes, over maxLine %d", i, len(l), maxLine)
				}
				if !strings.HasPrefix(l, "[p] ") {
					t.Errorf("line %d lacks its prefix", i)
				}
			}
			if len(w.buf) != tc.left {
				t.Errorf("%d bytes kept, want %d", len(w.buf), tc.left)
			}
		})
	}
}
