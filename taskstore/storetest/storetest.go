// Package storetest holds every taskstore.Store to the same behaviour: Run
// is the test of each implementation.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolc/toolc/taskstore"
)

// Run tests the Store that open returns (a fresh, empty one each time).
func Run(t *testing.T, open func(t *testing.T) taskstore.Store) {
	ctx := context.Background()
	newTask := func(owner string, ttl time.Duration) *taskstore.Task {
		now := time.Now().UTC()
		return &taskstore.Task{ID: taskstore.NewID(), Owner: owner, Tool: "job", Status: taskstore.Working, CreatedAt: now, UpdatedAt: now, TTL: ttl}
	}

	t.Run("create get update", func(t *testing.T) {
		s := open(t)
		task := newTask("alice", time.Hour)
		if err := s.Create(ctx, task, taskstore.Limits{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, task, taskstore.Limits{}); !errors.Is(err, taskstore.ErrExists) {
			t.Errorf("second Create of one id: %v, want ErrExists", err)
		}
		got, err := s.Get(ctx, task.ID)
		if err != nil || got.Owner != "alice" || got.Status != taskstore.Working || !got.CreatedAt.Equal(task.CreatedAt) {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		if _, err := s.Get(ctx, taskstore.NewID()); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("Get of an unknown id: %v, want ErrNotFound", err)
		}
		stop := errors.New("no change")
		if _, err := s.Update(ctx, task.ID, taskstore.Limits{}, func(t *taskstore.Task) error { t.Status = taskstore.Failed; return stop }); !errors.Is(err, stop) {
			t.Errorf("Update whose change fails: %v", err)
		}
		if got, _ := s.Get(ctx, task.ID); got.Status != taskstore.Working {
			t.Errorf("a failed change was stored: %s", got.Status)
		}
		up, err := s.Update(ctx, task.ID, taskstore.Limits{}, func(t *taskstore.Task) error {
			t.Status, t.Result = taskstore.Completed, []byte(`{"content":[]}`)
			return nil
		})
		if err != nil || up.Status != taskstore.Completed {
			t.Fatalf("Update = %+v, %v", up, err)
		}
		if got, _ := s.Get(ctx, task.ID); got.Status != taskstore.Completed || string(got.Result) != `{"content":[]}` {
			t.Errorf("after Update, Get = %+v", got)
		}
		if _, err := s.Update(ctx, "nope", taskstore.Limits{}, func(*taskstore.Task) error { return nil }); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("Update of an unknown id: %v", err)
		}
	})

	t.Run("updates are atomic", func(t *testing.T) {
		s := open(t)
		task := newTask("", time.Hour)
		if err := s.Create(ctx, task, taskstore.Limits{}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Update(ctx, task.ID, taskstore.Limits{}, func(t *taskstore.Task) error {
					t.StatusMessage += "x"
					return nil
				}); err != nil {
					panic(fmt.Sprint(i, err))
				}
			}()
		}
		wg.Wait()
		if got, _ := s.Get(ctx, task.ID); len(got.StatusMessage) != 50 {
			t.Errorf("50 concurrent appends left %d", len(got.StatusMessage))
		}
	})

	t.Run("limits", func(t *testing.T) {
		s := open(t)
		lim := taskstore.Limits{PerOwner: 3, Total: 5, MaxBytes: 1 << 10}
		for i := range 3 {
			if err := s.Create(ctx, newTask("alice", time.Hour), lim); err != nil {
				t.Fatalf("alice's task %d: %v", i, err)
			}
		}
		if err := s.Create(ctx, newTask("alice", time.Hour), lim); !errors.Is(err, taskstore.ErrTooMany) {
			t.Errorf("alice's 4th task: %v, want ErrTooMany", err)
		}
		for i := range 2 {
			if err := s.Create(ctx, newTask(fmt.Sprint("user", i), time.Hour), lim); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Create(ctx, newTask("bob", time.Hour), lim); !errors.Is(err, taskstore.ErrTooMany) {
			t.Errorf("the 6th task: %v, want ErrTooMany", err)
		}
		big := newTask("carol", time.Hour)
		big.StatusMessage = string(make([]byte, 2<<10))
		if err := s.Create(ctx, big, taskstore.Limits{MaxBytes: 1 << 10}); !errors.Is(err, taskstore.ErrTooLarge) {
			t.Errorf("a 2 KiB task under 1 KiB: %v, want ErrTooLarge", err)
		}
		small := newTask("carol", time.Hour)
		if err := s.Create(ctx, small, taskstore.Limits{MaxBytes: 1 << 10}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(ctx, small.ID, taskstore.Limits{MaxBytes: 1 << 10}, func(t *taskstore.Task) error {
			t.Result = []byte(`"` + strings.Repeat("x", 2<<10) + `"`)
			return nil
		}); !errors.Is(err, taskstore.ErrTooLarge) {
			t.Errorf("an Update past 1 KiB: %v, want ErrTooLarge", err)
		}
	})

	t.Run("ttl", func(t *testing.T) {
		s := open(t)
		lim := taskstore.Limits{PerOwner: 1}
		short := newTask("alice", 200*time.Millisecond)
		if err := s.Create(ctx, short, lim); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, short.ID); err != nil {
			t.Fatalf("Get within the TTL: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
		if _, err := s.Get(ctx, short.ID); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("Get after the TTL: %v, want ErrNotFound", err)
		}
		if _, err := s.Update(ctx, short.ID, lim, func(*taskstore.Task) error { return nil }); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("Update after the TTL: %v, want ErrNotFound", err)
		}
		// An expired task no longer counts against its owner.
		if err := s.Create(ctx, newTask("alice", time.Hour), lim); err != nil {
			t.Errorf("a new task once the only one expired: %v", err)
		}
	})

	t.Run("publish", func(t *testing.T) {
		s := open(t)
		got := make(chan string, 10)
		stop := s.Subscribe(func(id string) { got <- id })
		if err := s.Publish(ctx, "t1"); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-got:
			if id != "t1" {
				t.Errorf("subscriber got %q", id)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no publication within 5 s")
		}
		stop()
		s.Publish(ctx, "t2")
		select {
		case id := <-got:
			t.Errorf("a stopped subscriber got %q", id)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

// RedisServer starts a redis-server of its own on a free port, for the
// test, and returns its URL. Without the binary it skips, unless in CI
// ($CI set), where .ci/run installs it.
func RedisServer(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed; .ci/run installs it (apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", port)); err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatal("redis-server did not listen within 5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
}
