//go:build unix

package reqstate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadSecretSpecialFiles: --state-key-file names a file that is no
// regular file, or one far larger than a key: each is refused at once,
// with a message that says what it is. os.ReadFile filled memory from
// /dev/zero and blocked for ever on a FIFO.
func TestLoadSecretSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	big := filepath.Join(dir, "big.key")
	os.WriteFile(big, []byte(strings.Repeat("k", 1<<20)), 0o600)
	zero := filepath.Join(dir, "zero.key")
	os.Symlink("/dev/zero", zero)
	for file, want := range map[string]string{
		"/dev/zero": "the requestState key: /dev/zero is a character device, not a regular file",
		zero:        "zero.key is a character device, not a regular file",
		fifo:        "fifo.key is a FIFO, not a regular file",
		big:         "big.key is over the 64KiB that such a file may hold",
	} {
		done := make(chan error, 1)
		go func() { _, err := LoadSecret(file, ""); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("LoadSecret(%s) = %v, want %q", file, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadSecret(%s) blocked", file)
		}
	}
}
