//go:build unix

package scaffold

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestEnclosingModuleSpecialGoMod: toolc init looks for a go.mod above
// its directory; one that is a FIFO or a link to /dev/zero is passed over
// at once, as no module file, where os.ReadFile blocked on the FIFO and
// filled memory from /dev/zero; and a checkout whose go.mod is one is no
// checkout.
func TestEnclosingModuleSpecialGoMod(t *testing.T) {
	for name, mk := range map[string]func(string) error{
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		dir := t.TempDir()
		if err := mk(filepath.Join(dir, "go.mod")); err != nil {
			t.Skip(err)
		}
		sub := filepath.Join(dir, "tools")
		os.MkdirAll(sub, 0o755)
		done := make(chan [2]any, 1)
		go func() { done <- [2]any{enclosingModule(sub), isCheckout(dir)} }()
		select {
		case got := <-done:
			if got[0] != "" || got[1] == nil {
				t.Errorf("%s go.mod: enclosingModule = %q, isCheckout = %v", name, got[0], got[1])
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s go.mod: enclosingModule blocked", name)
		}
	}
}
