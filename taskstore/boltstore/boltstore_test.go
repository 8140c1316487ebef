package boltstore_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/boltstore"
	"github.com/toolc/toolc/taskstore/storetest"
)

func open(t *testing.T, path string) taskstore.Store {
	t.Helper()
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) taskstore.Store {
		s := open(t, filepath.Join(t.TempDir(), "tasks.db"))
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestRestart: tasks outlive the process's store; the ones that had not
// finished are failed, saying why; finished ones are as they were; a
// second process cannot open the file while one holds it.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "tasks.db")
	s := open(t, path)
	if _, err := boltstore.Open(path); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("a second Open of a held file: %v, want in use", err)
	}
	now := time.Now().UTC()
	mk := func(status taskstore.Status) *taskstore.Task {
		task := &taskstore.Task{ID: taskstore.NewID(), Tool: "job", Status: status, CreatedAt: now, UpdatedAt: now, TTL: time.Hour}
		if status == taskstore.Completed {
			task.Result = []byte(`{"content":[{"type":"text","text":"done"}]}`)
		}
		if err := s.Create(ctx, task, taskstore.Limits{}); err != nil {
			t.Fatal(err)
		}
		return task
	}
	working, waiting, done := mk(taskstore.Working), mk(taskstore.InputRequired), mk(taskstore.Completed)
	expired := &taskstore.Task{ID: taskstore.NewID(), Status: taskstore.Working, CreatedAt: now.Add(-2 * time.Hour), TTL: time.Hour}
	if err := s.Create(ctx, expired, taskstore.Limits{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer s.Close()
	for _, task := range []*taskstore.Task{working, waiting} {
		got, err := s.Get(ctx, task.ID)
		if err != nil || got.Status != taskstore.Failed || got.Error == nil || got.Error.Code != -32603 || got.Error.Message != boltstore.Interrupted {
			t.Errorf("a %s task after a restart: %+v, %v; want failed, saying it was interrupted", task.Status, got, err)
		}
	}
	if got, err := s.Get(ctx, done.ID); err != nil || got.Status != taskstore.Completed || string(got.Result) != string(done.Result) {
		t.Errorf("a completed task after a restart: %+v, %v", got, err)
	}
	if _, err := s.Get(ctx, expired.ID); err == nil {
		t.Error("an expired task is found after a restart")
	}
}
