package open_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/open"
	"github.com/toolc/toolc/taskstore/storetest"
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
	// No file until the first task: a server none of whose calls becomes
	// a task leaves none.
	ctx := context.Background()
	if _, err := s.Get(ctx, "x"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("Get before any task = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Default made %s before any task (%v)", file, err)
	}
	seen := make(chan string, 1)
	stop := s.Subscribe(func(id string) { seen <- id })
	now := time.Now()
	task := &taskstore.Task{ID: "t1", Status: taskstore.Working, CreatedAt: now, UpdatedAt: now, TTL: time.Hour}
	if err := s.Create(ctx, task, taskstore.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("Default made no file at the first task: %v", err)
	}
	if got, err := s.Get(ctx, "t1"); err != nil || got.Status != taskstore.Working {
		t.Errorf("Get after Create = %v, %v", got, err)
	}
	s.Publish(ctx, "t1")
	if id := <-seen; id != "t1" {
		t.Errorf("a subscriber from before the file saw %q", id)
	}
	stop()
	s.Close()
	// A file there already is opened at once, and keeps its tasks.
	s, inMemory = open.Default(addr)
	if inMemory != nil {
		t.Fatal(inMemory)
	}
	if got, err := s.Get(ctx, "t1"); err != nil || got.ID != "t1" {
		t.Errorf("the task after a reopen = %v, %v", got, err)
	}
	s.Close()

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

// TestDefaultStore holds the default store, made lazily, to the contract
// every store keeps.
func TestDefaultStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) taskstore.Store {
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		s, inMemory := open.Default(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8931})
		if inMemory != nil {
			t.Fatal(inMemory)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
