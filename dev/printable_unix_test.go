//go:build unix

package dev

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolc/toolc/runtime"
)

// TestStatusPrintable: a status line that names a file prints the name
// through diag.Printable. A file named with ESC ] 52 (write the
// clipboard) or ESC [ 2 J (clear the screen), here a FIFO that the compile
// refuses, would otherwise act on the terminal of whoever runs toolc dev.
func TestStatusPrintable(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"api/svc.cue": "package api\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "api", "x\x1b]52;c;cm0gLXJm\x07\x1b[2J.cue"), 0o644); err != nil {
		t.Fatal(err)
	}
	var status bytes.Buffer
	d, err := New(Options{Dir: dir, Runtime: runtime.New(runtime.Options{}), Status: &status, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cat, why := d.compile()
	if cat != nil || why == nil {
		t.Fatal("a package with a FIFO compiled")
	}
	// What a client is told, too.
	if got := brief(why).Error(); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("a client is told %q, controls and all", got)
	}
	if got := status.String(); strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "x\uFFFD]52;c;cm0gLXJm\uFFFD\uFFFD[2J.cue") {
		t.Errorf("status:\n%q\nwant the FIFO's name with U+FFFD for its controls", got)
	}
}
