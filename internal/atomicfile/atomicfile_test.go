package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.json")
	for _, data := range []string{"first\n", "second, longer\n", ""} {
		if err := atomicfile.Write(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil || string(got) != data {
			t.Fatalf("read back %q, %v; want %q", got, err, data)
		}
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestWritePerm: the mode given is the file's, whatever it was before and
// whatever the umask would make of a new file's.
func TestWritePerm(t *testing.T) {
	name := filepath.Join(t.TempDir(), "secret.json")
	for _, perm := range []fs.FileMode{0o600, 0o640, 0o600} {
		if err := atomicfile.WritePerm(name, []byte("{}"), perm); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != perm {
			t.Errorf("WritePerm(%v): mode %v, %v", perm, fi.Mode().Perm(), err)
		}
	}
}

func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	if err := os.Mkdir(name, 0o755); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.Write(name, []byte("x"))
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != name || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("writing over a directory: %v", err)
	}
	missing := filepath.Join(dir, "no", "such", "dir", "f")
	if err := atomicfile.Write(missing, []byte("x")); !errors.As(err, &pe) || pe.Path != missing || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("writing into a missing directory: %v", err)
	}
}
