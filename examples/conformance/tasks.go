package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolc/toolc/plugins"
)

// The handlers of tasks.cue. They are ordinary handlers: nothing in them
// knows whether the call runs as a task. toolc serve makes a call a task
// when it has not ended within its task window, so the ones the suite
// expects as tasks work for a second (work) before they finish or ask.

// work waits d, or until the call is cancelled (tasks/cancel cancels a
// task's context), reporting progress each second: a task's progress is
// its status message.
func work(ctx context.Context, d time.Duration, what string) error {
	total := d.Seconds()
	for done := time.Duration(0); done < d; {
		step := min(time.Second, d-done)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(step):
		}
		done += step
		plugins.Progress(ctx, done.Seconds(), total, fmt.Sprintf("%s: %.0f of %.0f s", what, done.Seconds(), total))
	}
	return nil
}

func (fixtures) Greet(_ context.Context, req GreetRequest) (*plugins.Result, error) {
	return plugins.Text("Hello, " + req.Name + "!"), nil
}

func (fixtures) SlowCompute(ctx context.Context, req SlowComputeRequest) (*plugins.Result, error) {
	if err := work(ctx, time.Duration(req.Seconds)*time.Second, "computing "+req.Label); err != nil {
		return nil, err
	}
	return plugins.Text(fmt.Sprintf("computed %q in %d s", req.Label, req.Seconds)), nil
}

func (fixtures) FailingJob(ctx context.Context, _ FailingJobRequest) (*plugins.Result, error) {
	if err := work(ctx, time.Second, "failing"); err != nil {
		return nil, err
	}
	return plugins.Errorf("the job failed, as it always does"), nil
}

func (fixtures) ProtocolErrorJob(ctx context.Context, _ ProtocolErrorJobRequest) (*plugins.Result, error) {
	if err := work(ctx, time.Second, "starting"); err != nil {
		return nil, err
	}
	// Without the client's roots the call cannot go on: the error is
	// MCP's missing capability (-32021), a JSON-RPC error, so the task
	// fails with it.
	roots, err := plugins.Roots(ctx, "roots")
	if err != nil {
		return nil, err
	}
	return plugins.Text("roots: " + rootList(roots)), nil
}

// deleteForm asks for a confirmation.
var deleteForm = plugins.Form{Message: "Delete the file?", Schema: json.RawMessage(
	`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)}

func (fixtures) ConfirmDelete(ctx context.Context, req ConfirmDeleteRequest) (*plugins.Result, error) {
	if err := work(ctx, time.Second, "looking up "+req.Filename); err != nil {
		return nil, err
	}
	res, err := plugins.Elicit(ctx, "confirm", plugins.Form{Message: "Delete " + req.Filename + "?", Schema: deleteForm.Schema})
	if err != nil {
		return nil, err
	}
	var v struct {
		Confirm bool `json:"confirm"`
	}
	if !res.Accepted() || res.Decode(&v) != nil || !v.Confirm {
		return plugins.Text(req.Filename + " was kept"), nil
	}
	return plugins.Text(req.Filename + " was deleted (not really: this is a fixture)"), nil
}

// answerForm takes a name and a confirmation, as the suite answers both
// questions of multi_input.
var answerForm = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`)

func (fixtures) MultiInput(ctx context.Context, _ MultiInputRequest) (*plugins.Result, error) {
	if err := work(ctx, time.Second, "preparing"); err != nil {
		return nil, err
	}
	first, err1 := plugins.Elicit(ctx, "first", plugins.Form{Message: "First answer?", Schema: answerForm})
	second, err2 := plugins.Elicit(ctx, "second", plugins.Form{Message: "Second answer?", Schema: answerForm})
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return plugins.Text(fmt.Sprintf("first: %v, second: %v", first.Content, second.Content)), nil
}

func (fixtures) TestToolWithTask(ctx context.Context, _ TestToolWithTaskRequest) (*plugins.Result, error) {
	user, err := plugins.Elicit(ctx, "user_name", nameForm)
	if err != nil {
		return nil, err
	}
	if err := work(ctx, time.Second, "greeting"); err != nil {
		return nil, err
	}
	return plugins.Text("Hello, " + name(user) + "!"), nil
}
