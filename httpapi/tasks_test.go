package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
)

// TestV1Tasks: a function caller starts a task tool with POST /v1/tasks,
// polls it with GET /v1/tasks/{id} to its result, and cancels one with
// DELETE; the same task is MCP's (tasks/get sees it).
func TestV1Tasks(t *testing.T) {
	ms := &catalog.Field{Name: "ms", Type: catalog.Integer, Description: "How long", Required: true}
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".", Tools: []*catalog.Tool{
		{Name: "job", Description: "A job", Task: catalog.TaskOptional, MCPName: "job", Request: catalog.Message{Fields: []*catalog.Field{ms}}},
		{Name: "quick", Description: "Not a task", MCPName: "quick", Request: catalog.Message{Fields: []*catalog.Field{}}},
	}}}}
	cat.Seal()
	cancelled := make(chan bool, 1)
	job := plugins.Handle("job", func(ctx context.Context, a struct {
		Ms int `json:"ms"`
	}) (*plugins.Result, error) {
		select {
		case <-ctx.Done():
			cancelled <- true
			return nil, ctx.Err()
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
		}
		return plugins.Text(fmt.Sprintf("worked %d ms", a.Ms)), nil
	})
	quick := plugins.Handle("quick", func(context.Context, struct{}) (*plugins.Result, error) { return plugins.Text("quick"), nil })
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"jobs": runtime.Local(job, quick)}); err != nil {
		t.Fatal(err)
	}
	m := tasks.New(rt, tasks.Options{Store: taskstore.NewMemory()})
	t.Cleanup(m.Close)
	ts := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{Tasks: m}), httpapi.Options{MCP: mcpserver.HTTPOptions{Tasks: m}}))
	t.Cleanup(ts.Close)

	start := func(body string) (runtimetest.HTTPResult, httpapi.TaskResponse) {
		t.Helper()
		r := runtimetest.Do(t, "POST", ts.URL+"/v1/tasks", body, map[string]string{"Content-Type": "application/json"})
		var task httpapi.TaskResponse
		json.Unmarshal([]byte(r.Body), &task)
		return r, task
	}
	get := func(id string) (runtimetest.HTTPResult, httpapi.TaskResponse) {
		t.Helper()
		r := runtimetest.Do(t, "GET", ts.URL+"/v1/tasks/"+id, "", nil)
		var task httpapi.TaskResponse
		json.Unmarshal([]byte(r.Body), &task)
		return r, task
	}

	r, task := start(`{"name":"job","arguments":{"ms":300}}`)
	if r.Status != http.StatusAccepted || task.TaskID == "" || task.Status != "working" || r.Header.Get("Location") != "/v1/tasks/"+task.TaskID {
		t.Fatalf("POST /v1/tasks = %d %s (Location %q), want 202 and a working task", r.Status, r.Body, r.Header.Get("Location"))
	}
	// The same task through MCP.
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	mcpGet := runtimetest.RPC(t, ts.URL, "tasks/get", map[string]any{"taskId": task.TaskID, "_meta": meta}, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": task.TaskID})
	if mcpGet.Result["taskId"] != task.TaskID {
		t.Errorf("MCP tasks/get of a /v1 task = %v %+v", mcpGet.Result, mcpGet.Error)
	}
	deadline := time.Now().Add(5 * time.Second)
	for task.Status == "working" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		r, task = get(task.TaskID)
	}
	if r.Status != http.StatusOK || task.Status != "completed" || task.Result == nil || task.Result.IsError || !strings.Contains(r.Body, "worked 300 ms") {
		t.Fatalf("GET /v1/tasks/{id} at the end = %d %s, want completed with the result", r.Status, r.Body)
	}

	_, long := start(`{"name":"job","arguments":"{\"ms\":60000}"}`)
	if d := runtimetest.Do(t, "DELETE", ts.URL+"/v1/tasks/"+long.TaskID, "", nil); d.Status != http.StatusNoContent {
		t.Errorf("DELETE = %d %s, want 204", d.Status, d.Body)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Error("DELETE did not cancel the handler's context")
	}
	if _, got := get(long.TaskID); got.Status != "cancelled" {
		t.Errorf("after DELETE, status %q", got.Status)
	}

	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/v1/tasks/no-such-task", "", 404, `{"error":"task not found"}`},
		{"GET", "/v1/tasks/" + taskstore.NewID(), "", 404, `{"error":"task not found"}`},
		{"DELETE", "/v1/tasks/no-such-task", "", 404, `{"error":"task not found"}`},
		{"POST", "/v1/tasks", `{"name":"quick","arguments":{}}`, 400, "does not run as a task"},
		{"POST", "/v1/tasks", `{"name":"nope","arguments":{}}`, 404, "unknown tool"},
		{"POST", "/v1/tasks", `{"name":"job","NAME":"quick"}`, 400, "the body must be"},
	} {
		r := runtimetest.Do(t, c.method, ts.URL+c.path, c.body, map[string]string{"Content-Type": "application/json"})
		if r.Status != c.status || !strings.Contains(r.Body, c.want) {
			t.Errorf("%s %s %s = %d %s, want %d %s", c.method, c.path, c.body, r.Status, r.Body, c.status, c.want)
		}
	}
}
