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
