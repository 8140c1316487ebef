//go:build unix

package rpc

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/testsync"
)

// TestPinnedBinaryIsWhatRuns swaps the binary at the pinned path between
// the check of its checksum and its exec, as a rename in the handler cache
// during a restart would: the process that runs is the one that was
// checked, and the impostor never runs, then or at the next start.
func TestPinnedBinaryIsWhatRuns(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(bin, "toolbox"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	path := filepath.Join(dir, "toolbox-0123abcd")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "impostor-ran")
	impostor := filepath.Join(dir, ".impostor")
	if err := os.WriteFile(impostor, []byte("#!/bin/sh\necho ran > "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	swapped := false
	testHookPinned = func(p string) {
		if p == path && !swapped {
			swapped = true
			if err := os.Rename(impostor, path); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testHookPinned = nil })

	cfg := ClientConfig{Service: "toolbox", Path: path, Checksum: sum[:], Stderr: &testsync.Buffer{}}
	c, err := Start(context.Background(), cfg)
	if err != nil {
		if _, serr := os.Stat(ran); serr == nil {
			t.Fatalf("the impostor ran in place of the pinned binary: Start: %v", err)
		}
		t.Fatalf("Start: %v", err)
	}
	defer c.Kill()
	if !swapped {
		t.Fatal("the test hook did not swap the binary")
	}
	if got := text(call(t, c, "say", `{"Message":"pinned"}`)); got != "pinned" {
		t.Errorf("say = %q, want the pinned toolbox's answer", got)
	}
	// The next start (a restart) finds the impostor at the path, and
	// refuses it without running it.
	if c2, err := Start(context.Background(), cfg); err == nil {
		c2.Kill()
		t.Error("a start of the impostor succeeded")
	} else if !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("the start of the impostor: %v, want a checksum mismatch", err)
	}
	time.Sleep(100 * time.Millisecond) // a process that ran would have written by now
	if _, err := os.Stat(ran); err == nil {
		t.Error("the impostor ran")
	}
	if args := text(call(t, c, "getenv", `{"Name":"`+Handshake.MagicCookieKey+`"}`)); args != Handshake.MagicCookieValue {
		t.Errorf("the pinned plugin's handshake variable = %q", args)
	}
}

// TestPinRefusesSpecialFiles: a FIFO in the binary's place (with the
// executable bits that exec.LookPath asks of it) is refused at once,
// neither read, which would block, nor run.
func TestPinRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "is a FIFO, not a regular file"} {
		done := make(chan error, 1)
		go func() {
			_, err := Start(context.Background(), ClientConfig{Service: "svc", Path: path, Checksum: make([]byte, 32), Stderr: &testsync.Buffer{}})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Start(%s) = %v, want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Start(%s) did not return", path)
		}
	}
}

// TestPinCopy covers the pinning of systems without /proc/self/fd: a copy,
// hashed as it is written, in a directory only its owner may enter, that
// Release removes; and nothing left behind for a binary with another sum.
func TestPinCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "plugin")
	data := []byte("#!/bin/sh\nexit 0\n")
	if err := os.WriteFile(src, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	open := func() *os.File {
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}

	if _, err := pinCopy(open(), "plugin", make([]byte, 32)); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("pinCopy with the wrong sum = %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a refused copy left %s", left[0].Name())
	}

	p, err := pinCopy(open(), "plugin", sum[:])
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p.exe)
	if err != nil || string(got) != string(data) {
		t.Errorf("the copy holds %q, %v", got, err)
	}
	fi, err := os.Stat(p.exe)
	if err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("the copy's mode = %v, %v; want 0500", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Dir(p.exe))
	if err != nil || di.Mode().Perm() != 0o700 || filepath.Dir(filepath.Dir(p.exe)) != tmp {
		t.Errorf("the copy's directory %s has mode %v, %v; want a new directory in $TMPDIR with 0700", filepath.Dir(p.exe), di.Mode(), err)
	}
	p.release()
	p.release()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("release left %s", left[0].Name())
	}
}
