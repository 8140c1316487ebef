//go:build unix

package gogen

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportPathOfSpecialGoMod: a go.mod above the contract that is a FIFO
// or a link to /dev/zero is an error that names it, at once; os.ReadFile
// blocked on the FIFO and filled memory from /dev/zero.
func TestImportPathOfSpecialGoMod(t *testing.T) {
	for name, mk := range map[string]func(string) error{
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		dir := t.TempDir()
		if err := mk(filepath.Join(dir, "go.mod")); err != nil {
			t.Skip(err)
		}
		contract := filepath.Join(dir, "api")
		os.MkdirAll(contract, 0o755)
		done := make(chan error, 1)
		go func() { _, err := importPathOf(contract); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "go.mod is a") || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s go.mod: importPathOf = %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s go.mod: importPathOf blocked", name)
		}
	}
}
