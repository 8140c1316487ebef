package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/toolc/toolc/internal/httpjson"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/validate"
)

// The function-call API's tasks, beside POST /v1/call, on the Manager and
// store that MCP's Tasks extension uses (HTTPOptions.Tasks):
//
//	POST   /v1/tasks       {"name","arguments"}: start a tool with task
//	                       support as a task; 202 and the task
//	GET    /v1/tasks/{id}  the task, with its result once completed
//	DELETE /v1/tasks/{id}  cancel it; 204
//
// A task belongs to its caller (its OAuth subject and client): anyone
// else gets the 404 of an id that does not exist.

// TaskResponse is a task as /v1/tasks answers it.
type TaskResponse struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs"`
	// Result is the call's result, as POST /v1/call answers it, once the
	// task is completed.
	Result *CallResponse `json:"result,omitempty"`
	// Error is the protocol error that failed the task.
	Error *taskstore.Error `json:"error,omitempty"`
}

func taskResponse(t *taskstore.Task) (*TaskResponse, error) {
	out := &TaskResponse{TaskID: t.ID, Status: string(t.Status), StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTLMs: t.TTL.Milliseconds(), PollIntervalMs: t.PollInterval.Milliseconds(), Error: t.Error}
	if t.Status == taskstore.Completed {
		var res plugins.Result
		if err := json.Unmarshal(t.Result, &res); err != nil {
			return nil, fmt.Errorf("reading the task's result: %w", err)
		}
		r := ResponseOf(&res)
		out.Result = &r
	}
	return out, nil
}

func ownerOf(r *http.Request) string {
	if c := oauth.CallerFrom(r.Context()); c != nil {
		return tasks.Owner(c.Subject, c.ClientID)
	}
	return ""
}

func startTaskHandler(rt *runtime.Runtime, m *tasks.Manager, envelope *validate.Validator) http.Handler {
	limit := rt.Options().MaxArgumentBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, msg string) { httpjson.Error(w, status, msg) }
		req, args, ok := readCall(w, r, envelope, limit, fail)
		if !ok {
			return
		}
		t, ok := rt.Snapshot().Lookup(req.Name)
		if !ok || runtime.AccessTo(oauth.CallerFrom(r.Context()), t) == runtime.Hidden {
			fail(http.StatusNotFound, fmt.Sprintf("%v %s", runtime.ErrUnknownTool, runtime.QuoteName(req.Name)))
			return
		}
		if t.Tool.Task == "" {
			fail(http.StatusBadRequest, fmt.Sprintf("tool %s does not run as a task (its contract sets no task); call it with POST /v1/call", runtime.QuoteName(req.Name)))
			return
		}
		// A caller of /v1 declares no capabilities: a handler that asks
		// it something fails with -32021.
		_, task, err := m.Start(r.Context(), tasks.Call{Owner: ownerOf(r), Tool: req.Name, Args: args, Input: &plugins.Input{}, Always: true})
		switch {
		case errors.Is(err, tasks.ErrTooMany):
			fail(http.StatusTooManyRequests, err.Error())
			return
		case err != nil:
			fail(http.StatusServiceUnavailable, err.Error())
			return
		}
		out, _ := taskResponse(task)
		w.Header().Set("Location", "/v1/tasks/"+task.ID)
		httpjson.Write(w, http.StatusAccepted, out)
	})
}

func taskHandler(m *tasks.Manager, cancel bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var t *taskstore.Task
		var err error
		if cancel {
			err = m.Cancel(r.Context(), ownerOf(r), id)
		} else {
			t, err = m.Get(r.Context(), ownerOf(r), id)
		}
		switch {
		case errors.Is(err, tasks.ErrNotFound):
			// The same answer for another caller's task, an expired one
			// and one that never was.
			httpjson.Error(w, http.StatusNotFound, "task not found")
			return
		case err != nil:
			httpjson.Error(w, http.StatusServiceUnavailable, "the task store failed: "+err.Error())
			return
		case cancel:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		out, err := taskResponse(t)
		if err != nil {
			httpjson.Error(w, http.StatusInternalServerError, err.Error())
			return
		}
		httpjson.Write(w, http.StatusOK, out)
	})
}
