package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/redisstore"
	"github.com/toolc/toolc/taskstore/storetest"
)

func redisServer(t *testing.T) string { return storetest.RedisServer(t) }

func open(t *testing.T, url string) taskstore.Store {
	t.Helper()
	s, err := redisstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	base := redisServer(t)
	db := 0
	storetest.Run(t, func(t *testing.T) taskstore.Store {
		db++ // a fresh database for each case
		return open(t, base[:len(base)-1]+fmt.Sprint(db))
	})
}

func TestOpenBadURL(t *testing.T) {
	for _, url := range []string{"redis://", "redis://127.0.0.1:1/x", "http://127.0.0.1:6379/0", "redis://127.0.0.1:1/0"} {
		if _, err := redisstore.Open(context.Background(), url); err == nil {
			t.Errorf("Open(%q) succeeded", url)
		}
	}
}

// replica is one toolc process: a runtime with the job tool and a Manager
// on the shared Redis.
type replica struct {
	m         *tasks.Manager
	cancelled chan string // the label of each job whose context was cancelled
}

func newReplica(t *testing.T, url string) *replica {
	t.Helper()
	r := &replica{cancelled: make(chan string, 10)}
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".",
		Tools: []*catalog.Tool{{Name: "job", Description: "A job", Task: catalog.TaskOptional, Request: catalog.Message{Fields: []*catalog.Field{
			{Name: "label", Type: catalog.String, Description: "label", Required: true},
			{Name: "ask", Type: catalog.Boolean, Description: "ask first", Required: false},
		}}}}}}}
	cat.Seal()
	rt := runtime.New(runtime.Options{})
	job := plugins.Handle("job", func(ctx context.Context, a struct {
		Label string `json:"label"`
		Ask   bool   `json:"ask"`
	}) (*plugins.Result, error) {
		time.Sleep(100 * time.Millisecond) // past the window
		if a.Ask {
			res, err := plugins.Elicit(ctx, "ok", plugins.Form{Message: "?", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)})
			if err != nil {
				return nil, err
			}
			return plugins.Text(fmt.Sprint(a.Label, " answered ", res.Content["ok"])), nil
		}
		<-ctx.Done()
		r.cancelled <- a.Label
		return nil, ctx.Err()
	})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"jobs": runtime.Local(job)}); err != nil {
		t.Fatal(err)
	}
	r.m = tasks.New(rt, tasks.Options{Store: open(t, url), Window: 20 * time.Millisecond})
	t.Cleanup(r.m.Close)
	return r
}

// TestReplicas: a task started through one replica is polled, answered
// and cancelled through another, and the cancel reaches the handler on
// the replica that runs it. A task whose replica died is failed, saying so.
func TestReplicas(t *testing.T) {
	url := redisServer(t)
	a, b := newReplica(t, url), newReplica(t, url)
	ctx := context.Background()
	in := &plugins.Input{Elicitation: true}

	_, task, err := a.m.Start(ctx, tasks.Call{Tool: "job", Args: json.RawMessage(`{"label":"long"}`), Input: in})
	if err != nil || task == nil {
		t.Fatalf("Start on a: %v, %v", task, err)
	}
	if got, err := b.m.Get(ctx, "", task.ID); err != nil || got.Status != taskstore.Working {
		t.Fatalf("Get on b right after Start on a: %+v, %v", got, err)
	}
	if err := b.m.Cancel(ctx, "", task.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case label := <-a.cancelled:
		if label != "long" {
			t.Errorf("cancelled %q", label)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancel through b did not reach the handler on a within 5 s")
	}
	if got, _ := a.m.Get(ctx, "", task.ID); got.Status != taskstore.Cancelled {
		t.Errorf("status on a after the cancel on b: %s", got.Status)
	}

	_, task, err = a.m.Start(ctx, tasks.Call{Tool: "job", Args: json.RawMessage(`{"label":"asks","ask":true}`), Input: in})
	if err != nil || task == nil {
		t.Fatalf("Start on a: %v, %v", task, err)
	}
	wait := func(want taskstore.Status) *taskstore.Task {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, err := b.m.Get(ctx, "", task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status == want {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("task is %s on b, not %s, after 5 s", got.Status, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait(taskstore.InputRequired)
	if err := b.m.Update(ctx, "", task.ID, func(q plugins.InputRequest) (plugins.Answer, bool) {
		return plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}, true
	}); err != nil {
		t.Fatal(err)
	}
	done := wait(taskstore.Completed)
	var res plugins.Result
	if json.Unmarshal(done.Result, &res) != nil || res.Content[0].Text != "asks answered true" {
		t.Errorf("result after an answer through b: %s", done.Result)
	}

	// A replica that dies leaves its tasks working; another replica that
	// reads one once the dead one's lease has lapsed fails it.
	store := open(t, url)
	now := time.Now().UTC()
	orphan := &taskstore.Task{ID: taskstore.NewID(), Tool: "job", Status: taskstore.Working, CreatedAt: now, UpdatedAt: now, TTL: time.Hour, Runner: "a-replica-that-died"}
	if err := store.Create(ctx, orphan, taskstore.Limits{}); err != nil {
		t.Fatal(err)
	}
	got, err := b.m.Get(ctx, "", orphan.ID)
	if err != nil || got.Status != taskstore.Failed || got.Error == nil || got.Error.Message != "the replica running the task stopped before the task finished" {
		t.Errorf("a task of a dead replica: %+v, %v; want failed, saying its replica stopped", got, err)
	}
	if _, err := b.m.Get(ctx, "someone else", orphan.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("another caller's Get: %v", err)
	}
}
