package contentfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/readme.md", "# hi\n")
	write("docs/link-target.txt", "inside")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("link-target.txt", filepath.Join(dir, "docs", "inside-link.txt")); err != nil {
		t.Fatal(err)
	}
	// A 1 GB file, sparse: refused by its size, never read.
	big, err := os.Create(filepath.Join(dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	big.Close()

	tests := []struct {
		name, want, err string
	}{
		{name: "docs/readme.md", want: "# hi\n"},
		{name: "docs/inside-link.txt", want: "inside"},
		{name: "./docs/../docs/readme.md", err: "leaves the contract's directory"},
		{name: "../secret.txt", err: "leaves the contract's directory"},
		{name: "..", err: "leaves the contract's directory"},
		{name: "/etc/passwd", err: "relative to the contract's directory"},
		{name: `docs\readme.md`, err: "slash-separated"},
		{name: "escape.txt", err: "through a symbolic link"},
		{name: "big.bin", err: "is 1073741824 bytes, over the 4 MiB"},
		{name: "docs", err: "not a regular file"},
		{name: "missing.txt", err: "does not exist beside the contract"},
		{name: "", err: "empty"},
	}
	for _, tt := range tests {
		got, err := Read(dir, tt.name)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Read(%q) = %q, %v; want an error containing %q", tt.name, got, err, tt.err)
			}
			if _, cerr := Check(dir, tt.name); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("Check(%q) = %v; want the error Read gives, %v", tt.name, cerr, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("Read(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestMIMEType(t *testing.T) {
	for name, want := range map[string]string{"a.PNG": "image/png", "notes.md": "text/markdown", "x.bmpx": "", "Makefile": ""} {
		if got := MIMEType(name); got != want {
			t.Errorf("MIMEType(%q) = %q, want %q", name, got, want)
		}
	}
	for mt, want := range map[string]bool{"text/plain": true, "application/json; charset=utf-8": true, "application/ld+json": true, "image/png": false, "application/pdf": false} {
		if got := IsText(mt); got != want {
			t.Errorf("IsText(%q) = %v, want %v", mt, got, want)
		}
	}
}
