//go:build unix

package dev

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestHashFilesSpecial: a file of the handler's inputs (a go.mod, a local
// package's file) that is a FIFO or a link to /dev/zero cannot be hashed:
// the part is "" (so the handler is rebuilt, nothing skipped on a guess),
// at once, where os.Open blocked on the FIFO and io.Copy never ended on
// /dev/zero.
func TestHashFilesSpecial(t *testing.T) {
	for name, mk := range map[string]func(string) error{
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		dir := t.TempDir()
		mod := filepath.Join(dir, "go.mod")
		if err := mk(mod); err != nil {
			t.Skip(err)
		}
		done := make(chan string, 1)
		go func() { sum, _ := hashFiles([]string{mod}); done <- sum }()
		select {
		case sum := <-done:
			if sum != "" {
				t.Errorf("%s go.mod hashed as %q", name, sum)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s go.mod: hashFiles did not return", name)
		}
		// The part of a module file, as the daemon hashes it.
		go func() { sum, _ := hashPart("mod:" + mod); done <- sum }()
		select {
		case sum := <-done:
			if sum != "" {
				t.Errorf("%s go.mod: part hashed as %q", name, sum)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s go.mod: hashPart did not return", name)
		}
	}
}
