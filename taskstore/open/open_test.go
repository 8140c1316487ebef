package open_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/open"
)

func TestURL(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		url     string
		wantErr string // empty: opens
	}{
		{"memory:", ""},
		{"file:" + filepath.Join(dir, "tasks.db"), ""},
		{"file:", "file: needs a path, as in file:/var/lib/toolc/tasks.db"},
		{"redis://127.0.0.1:1/0", "127.0.0.1:1"},
		{"postgres://db", "unknown store: give memory:, file:PATH or redis://HOST:PORT/DB"},
		{"", "unknown store"},
	} {
		s, err := open.URL(context.Background(), tt.url)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("URL(%q) = %v", tt.url, err)
				continue
			}
			s.Close()
			continue
		}
		if err == nil {
			s.Close()
			t.Errorf("URL(%q) opened a store, want an error with %q", tt.url, tt.wantErr)
		} else if !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("URL(%q) = %v, want an error with %q", tt.url, err, tt.wantErr)
		}
	}
}

func TestDefault(t *testing.T) {
	addr := &net.TCPAddr{IP: net.ParseIP("::1"), Port: 8931}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	file, err := open.DefaultFile(addr)
	if want := filepath.Join(state, "toolc", "tasks", "--1-8931.db"); err != nil || file != want {
		t.Errorf("DefaultFile(%s) = %q, %v, want %q", addr, file, err, want)
	}
	s, inMemory := open.Default(addr)
	if inMemory != nil {
		t.Fatalf("Default fell back to memory: %v", inMemory)
	}
	s.Close()
	if _, err := os.Stat(file); err != nil {
		t.Errorf("Default made no file: %v", err)
	}

	// A state directory that cannot hold the file: memory, and why.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", blocker)
	s, inMemory = open.Default(addr)
	if inMemory == nil {
		t.Error("Default under a file made a store, want memory and an error")
	}
	if got := fmt.Sprintf("%T", s); got != fmt.Sprintf("%T", taskstore.NewMemory()) {
		t.Errorf("Default's fallback is %s, want taskstore.NewMemory's", got)
	}
	s.Close()
}
