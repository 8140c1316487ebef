package inputfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{
		"1": 1, "1048576": 1 << 20, "64MiB": 64 << 20, "64M": 64 << 20, "2GiB": 2 << 30, "512KiB": 512 << 10,
		"10 MiB": 10 << 20, "7B": 7,
	} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "x", "1.5MiB", "1TiB", "99999999999GiB", "MiB"} {
		if _, err := ParseSize(s); err == nil || !strings.Contains(err.Error(), "such as 256MiB") {
			t.Errorf("ParseSize(%q) = %v, want an error", s, err)
		}
	}
	for n, want := range map[int64]string{64 << 20: "64MiB", 1 << 30: "1GiB", 1536: "1536 bytes", 3 << 10: "3KiB", 1: "1 bytes"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimit(t *testing.T) {
	t.Setenv(EnvVar, "")
	if n, err := Limit(); n != DefaultLimit || err != nil {
		t.Errorf("Limit() = %d, %v", n, err)
	}
	t.Setenv(EnvVar, "1KiB")
	if n, err := Limit(); n != 1024 || err != nil {
		t.Errorf("Limit() = %d, %v", n, err)
	}
	t.Setenv(EnvVar, "lots")
	if _, err := ReadFile(os.DevNull); err == nil || !strings.Contains(err.Error(), "$TOOLC_MAX_INPUT: \"lots\" is not a size") {
		t.Errorf("ReadFile with a bad limit: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	t.Setenv(EnvVar, "1KiB")
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if data, err := ReadFile(write("ok", 1024)); err != nil || len(data) != 1024 {
		t.Errorf("a file at the limit: %d bytes, %v", len(data), err)
	}
	big := write("big", 1025)
	var tl *TooLargeError
	if _, err := ReadFile(big); !errors.As(err, &tl) || err.Error() != big+" is over the 1KiB limit on input (set TOOLC_MAX_INPUT to raise it, as in TOOLC_MAX_INPUT=4KiB)" {
		t.Errorf("a file over the limit: %v", err)
	}
	if err := Check(big); !errors.As(err, &tl) {
		t.Errorf("Check of a file over the limit: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(big, link)
	if _, err := ReadFile(link); !errors.As(err, &tl) {
		t.Errorf("a link to a file over the limit: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skip(err)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	for name, want := range map[string]string{
		fifo: fifo + " is a FIFO, not a regular file", "/dev/zero": "/dev/zero is a character device, not a regular file",
		zero: zero + " is a character device", dir: dir + " is a directory",
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(name); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("ReadFile(%s) = %v, want %q", name, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", name)
		}
		if err := Check(name); err == nil {
			t.Errorf("Check(%s) passes", name)
		}
	}
}

// endless is a stream that never ends.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadAll(t *testing.T) {
	t.Setenv(EnvVar, "1MiB")
	r := &endless{}
	_, err := ReadAll(r, "standard input")
	if err == nil || err.Error() != "standard input is over the 1MiB limit on input (set TOOLC_MAX_INPUT to raise it, as in TOOLC_MAX_INPUT=4MiB)" {
		t.Errorf("ReadAll of an endless stream: %v", err)
	}
	if r.n > 2<<20 {
		t.Errorf("ReadAll read %d bytes of an endless stream, with a limit of 1 MiB", r.n)
	}
	if data, err := ReadAll(io.LimitReader(r, 1<<20), "x"); err != nil || len(data) != 1<<20 {
		t.Errorf("ReadAll at the limit: %d, %v", len(data), err)
	}
}

// TestReadJSONArgs: a call's arguments on standard input are read as
// they are, and nothing but space is no arguments, {}.
func TestReadJSONArgs(t *testing.T) {
	for in, want := range map[string]string{"": "{}", " \n\t": "{}", `{"a": 1}`: `{"a": 1}`, "null\n": "null\n"} {
		got, err := ReadJSONArgs(strings.NewReader(in))
		if err != nil || string(got) != want {
			t.Errorf("ReadJSONArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
