//go:build unix

package contentfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFIFO: a FIFO that nothing writes to, or a link to one, is
// refused without blocking: a content file replaced by one while the
// server runs would otherwise hold every read of it for ever.
func TestReadFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.md", filepath.Join(dir, "pipe-link.md")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pipe.md", "pipe-link.md"} {
		done := make(chan error, 2)
		go func() {
			_, err := Read(dir, name)
			done <- err
			_, err = Check(dir, name)
			done <- err
		}()
		for _, fn := range []string{"Read", "Check"} {
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), name+" is a FIFO, not a regular file") {
					t.Errorf("%s(%q) = %v; want an error that says it is a FIFO", fn, name, err)
				}
			case <-time.After(time.Minute): // a bound on a hang, not a measure
				t.Fatalf("%s(%q) blocks", fn, name)
			}
		}
	}
}
