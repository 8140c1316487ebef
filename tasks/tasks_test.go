package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
)

// args are the arguments of every fixture tool: how long to work, and
// what to do then.
type args struct {
	Ms   int    `json:"ms"`
	Then string `json:"then"`
}

// cancelled counts the handlers whose context was cancelled.
var cancelled atomic.Int64

// handler works for ms milliseconds, reporting progress, then does what
// then says: "ask" asks two questions, "big" returns a large text,
// "roots" needs the client's roots; else it returns "done".
func handler(ctx context.Context, a args) (*plugins.Result, error) {
	plugins.Progress(ctx, 0, 1, "starting")
	select {
	case <-ctx.Done():
		cancelled.Add(1)
		return nil, ctx.Err()
	case <-time.After(time.Duration(a.Ms) * time.Millisecond):
	}
	plugins.Progress(ctx, 1, 1, "worked")
	switch a.Then {
	case "ask":
		form := plugins.Form{Message: "?", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}
		first, err1 := plugins.Elicit(ctx, "first", form)
		second, err2 := plugins.Elicit(ctx, "second", form)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		return plugins.Text(fmt.Sprintf("answers %v %v", first.Content["ok"], second.Content["ok"])), nil
	case "big":
		return plugins.Text(strings.Repeat("x", 100<<20)), nil
	case "medium":
		return plugins.Text(strings.Repeat("x", 64<<10)), nil
	case "roots":
		if _, err := plugins.Roots(ctx, "roots"); err != nil {
			return nil, err
		}
	}
	return plugins.Text("done"), nil
}

func newRuntime(t testing.TB, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	field := func(name string, typ catalog.Type) *catalog.Field {
		return &catalog.Field{Name: name, Type: typ, Description: name, Required: false}
	}
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".",
		Tools: []*catalog.Tool{{Name: "job", Description: "A job", Task: catalog.TaskOptional,
			Request: catalog.Message{Fields: []*catalog.Field{field("ms", catalog.Integer), field("then", catalog.String)}}}},
	}}}
	cat.Seal()
	rt := runtime.New(opts)
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"jobs": runtime.Local(plugins.Handle("job", handler))}); err != nil {
		t.Fatal(err)
	}
	return rt
}

func newManager(t testing.TB, rt *runtime.Runtime, opts tasks.Options) *tasks.Manager {
	t.Helper()
	if opts.Store == nil {
		opts.Store = taskstore.NewMemory()
	}
	if opts.Window == 0 {
		opts.Window = 20 * time.Millisecond
	}
	m := tasks.New(rt, opts)
	t.Cleanup(m.Close)
	return m
}

func start(t testing.TB, m *tasks.Manager, owner string, a args, in *plugins.Input) (*runtime.Result, *taskstore.Task) {
	t.Helper()
	b, _ := json.Marshal(a)
	if in == nil {
		in = &plugins.Input{Elicitation: true}
	}
	res, task, err := m.Start(context.Background(), tasks.Call{Owner: owner, Tool: "job", Args: b, Input: in})
	if err != nil {
		t.Fatalf("Start(%+v): %v", a, err)
	}
	return res, task
}

// wait polls the owner's task until it is in one of the statuses.
func wait(t testing.TB, m *tasks.Manager, owner, id string, want ...taskstore.Status) *taskstore.Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := m.Get(context.Background(), owner, id)
		if err != nil {
			t.Fatalf("Get %s: %v", id, err)
		}
		for _, s := range want {
			if task.Status == s {
				return task
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%q), not %v, after 10 s", id, task.Status, task.StatusMessage, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func resultText(t testing.TB, task *taskstore.Task) (string, bool) {
	t.Helper()
	var res plugins.Result
	if err := json.Unmarshal(task.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("task result %s: %v", task.Result, err)
	}
	return res.Content[0].Text, res.IsError
}

func TestStartWithinWindowIsAPlainCall(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{Window: time.Second})
	res, task := start(t, m, "", args{Ms: 0}, nil)
	if task != nil || res == nil || res.Content[0].Text != "done" {
		t.Fatalf("a call that ends within the window: result %+v, task %+v; want the result and no task", res, task)
	}
	// Questions asked within the window go back on the request.
	res, task = start(t, m, "", args{Ms: 0, Then: "ask"}, nil)
	if task != nil || res == nil || len(res.InputRequests) != 2 {
		t.Fatalf("a call that asks within the window: result %+v, task %+v; want its 2 questions", res, task)
	}
}

func TestTaskCompletesWithProgressAsStatus(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{})
	_, task := start(t, m, "", args{Ms: 300}, nil)
	if task == nil || task.Status != taskstore.Working || task.ID == "" {
		t.Fatalf("a call past the window: task %+v, want a working task", task)
	}
	if _, err := m.Get(context.Background(), "", task.ID); err != nil {
		t.Fatalf("Get right after Start: %v (the task must be stored before Start returns)", err)
	}
	done := wait(t, m, "", task.ID, taskstore.Completed)
	if text, isErr := resultText(t, done); text != "done" || isErr {
		t.Errorf("result %q (isError %v), want done", text, isErr)
	}
	if done.StatusMessage != "worked" {
		t.Errorf("status message %q, want the last progress message, worked", done.StatusMessage)
	}
}

func TestCancel(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{})
	before := cancelled.Load()
	_, task := start(t, m, "", args{Ms: 60_000}, nil)
	if err := m.Cancel(context.Background(), "", task.ID); err != nil {
		t.Fatal(err)
	}
	got := wait(t, m, "", task.ID, taskstore.Cancelled, taskstore.Completed, taskstore.Failed)
	if got.Status != taskstore.Cancelled {
		t.Fatalf("status %s after cancel, want cancelled", got.Status)
	}
	deadline := time.Now().Add(5 * time.Second)
	for cancelled.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("the handler's context was not cancelled")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// On a finished task, cancel is acknowledged and changes nothing.
	_, task = start(t, m, "", args{Ms: 50}, nil)
	wait(t, m, "", task.ID, taskstore.Completed)
	if err := m.Cancel(context.Background(), "", task.ID); err != nil {
		t.Fatalf("cancel of a finished task: %v, want an ack", err)
	}
	if got := wait(t, m, "", task.ID, taskstore.Completed, taskstore.Cancelled); got.Status != taskstore.Completed {
		t.Errorf("a finished task became %s on cancel", got.Status)
	}
}

func TestQuestionsWaitForAnswers(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{})
	_, task := start(t, m, "", args{Ms: 100, Then: "ask"}, nil)
	asked := wait(t, m, "", task.ID, taskstore.InputRequired)
	if len(asked.Questions) != 2 {
		t.Fatalf("questions %+v, want first and second", asked.Questions)
	}
	answer := func(id string) tasks.Answer {
		return func(q plugins.InputRequest) (plugins.Answer, bool) {
			if q.ID != id {
				return plugins.Answer{}, false
			}
			return plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}, true
		}
	}
	if err := m.Update(context.Background(), "", task.ID, answer("first")); err != nil {
		t.Fatal(err)
	}
	partial, _ := m.Get(context.Background(), "", task.ID)
	if partial.Status != taskstore.InputRequired || len(partial.Questions) != 1 || partial.Questions[0].ID != "second" {
		t.Fatalf("after one answer: %s with %+v, want input_required with second only", partial.Status, partial.Questions)
	}
	// An answer to a question nobody asked is ignored.
	if err := m.Update(context.Background(), "", task.ID, answer("third")); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(context.Background(), "", task.ID, answer("second")); err != nil {
		t.Fatal(err)
	}
	done := wait(t, m, "", task.ID, taskstore.Completed)
	if text, _ := resultText(t, done); text != "answers true true" {
		t.Errorf("result %q, want both answers", text)
	}
}

func TestProtocolErrorFails(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{})
	_, task := start(t, m, "", args{Ms: 100, Then: "roots"}, &plugins.Input{})
	failed := wait(t, m, "", task.ID, taskstore.Failed, taskstore.Completed)
	if failed.Status != taskstore.Failed || failed.Error == nil || failed.Error.Code != -32021 || failed.Result != nil {
		t.Errorf("a call that needs an undeclared capability: %s, error %+v; want failed with -32021", failed.Status, failed.Error)
	}
}

// TestOwnTasksOnly: another caller's task id gets exactly the answer of an
// id that does not exist, for every method.
func TestOwnTasksOnly(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{})
	alice, bob := tasks.Owner("alice", "app"), tasks.Owner("bob", "app")
	if alice == bob || tasks.Owner("alice", "other") == alice {
		t.Fatal("owners of different subjects or clients are equal")
	}
	_, task := start(t, m, alice, args{Ms: 60_000}, nil)
	for _, id := range []string{task.ID, "no-such-task", taskstore.NewID()} {
		_, err := m.Get(context.Background(), bob, id)
		if !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("Get %s as another caller: %v, want ErrNotFound", id, err)
		}
		if err := m.Cancel(context.Background(), bob, id); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("Cancel %s as another caller: %v, want ErrNotFound", id, err)
		}
		if err := m.Update(context.Background(), bob, id, func(plugins.InputRequest) (plugins.Answer, bool) { return plugins.Answer{}, false }); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("Update %s as another caller: %v, want ErrNotFound", id, err)
		}
	}
	if got, _ := m.Get(context.Background(), alice, task.ID); got.Status != taskstore.Working {
		t.Errorf("another caller's cancel changed the task to %s", got.Status)
	}
}

// TestTaskTimeoutIsItsOwn: a task's call is bounded by Options.Timeout,
// not by the runtime's CallTimeout.
func TestTaskTimeoutIsItsOwn(t *testing.T) {
	rt := newRuntime(t, runtime.Options{CallTimeout: 50 * time.Millisecond})
	m := newManager(t, rt, tasks.Options{Timeout: 2 * time.Second})
	_, task := start(t, m, "", args{Ms: 300}, nil)
	if text, isErr := resultText(t, wait(t, m, "", task.ID, taskstore.Completed)); text != "done" || isErr {
		t.Errorf("a 300 ms task under a 50 ms CallTimeout: %q (isError %v), want done", text, isErr)
	}
	m = newManager(t, rt, tasks.Options{Timeout: 300 * time.Millisecond})
	_, task = start(t, m, "", args{Ms: 5000}, nil)
	text, isErr := resultText(t, wait(t, m, "", task.ID, taskstore.Completed))
	if !isErr || !strings.Contains(text, "did not finish within 300ms") {
		t.Errorf("a 5 s task under a 300 ms task timeout: %q (isError %v), want the timeout's tool error", text, isErr)
	}
}

func TestTTL(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{TTL: 300 * time.Millisecond})
	_, task := start(t, m, "", args{Ms: 50}, nil)
	wait(t, m, "", task.ID, taskstore.Completed)
	time.Sleep(350 * time.Millisecond)
	if _, err := m.Get(context.Background(), "", task.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("Get after the TTL: %v, want ErrNotFound", err)
	}
}

// TestCaps: one caller starting 10,000 tasks gets MaxPerCaller of them,
// and a clear error for the rest; another caller still gets its own.
func TestCaps(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{MaxConcurrentCalls: 20_000}), tasks.Options{MaxPerCaller: 1000, MaxTasks: 1500, Window: time.Millisecond})
	created, refused := 0, 0
	for range 10_000 {
		b, _ := json.Marshal(args{Ms: 60_000})
		_, task, err := m.Start(context.Background(), tasks.Call{Owner: "mallory", Tool: "job", Args: b, Input: &plugins.Input{}})
		switch {
		case errors.Is(err, tasks.ErrTooMany):
			refused++
		case err != nil:
			t.Fatal(err)
		case task != nil:
			created++
		}
	}
	if created != 1000 || refused != 9000 {
		t.Errorf("10,000 starts of one caller: %d tasks, %d refused; want 1000 and 9000", created, refused)
	}
	for i := range 600 {
		b, _ := json.Marshal(args{Ms: 60_000})
		_, _, err := m.Start(context.Background(), tasks.Call{Owner: fmt.Sprint("user", i%3), Tool: "job", Args: b, Input: &plugins.Input{}})
		if (i < 500) != (err == nil) {
			t.Fatalf("start %d of other callers with 1000 of 1500 taken: %v", i, err)
		}
	}
}

// TestLargeResults: a 100 MB result is refused by the runtime's bound; one
// within it but over MaxTaskBytes ends the task with a tool error that
// says so, and nothing large is kept.
func TestLargeResults(t *testing.T) {
	m := newManager(t, newRuntime(t, runtime.Options{}), tasks.Options{MaxTaskBytes: 32 << 10})
	_, task := start(t, m, "", args{Ms: 50, Then: "big"}, nil)
	text, isErr := resultText(t, wait(t, m, "", task.ID, taskstore.Completed))
	if !isErr || !strings.Contains(text, "over the limit") {
		t.Errorf("a 100 MB result: %.200q (isError %v), want the runtime's limit", text, isErr)
	}
	_, task = start(t, m, "", args{Ms: 50, Then: "medium"}, nil)
	done := wait(t, m, "", task.ID, taskstore.Completed)
	text, isErr = resultText(t, done)
	if !isErr || !strings.Contains(text, "larger than a task may keep") || len(done.Result) > 32<<10 {
		t.Errorf("a 64 KiB result over a 32 KiB task bound: %.200q (isError %v, %d bytes kept)", text, isErr, len(done.Result))
	}
}
