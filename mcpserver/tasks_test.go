package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
)

const tasksExt = "io.modelcontextprotocol/tasks"

// serveTasks serves three tools over MCP with a task Manager: job
// (task: optional), must (task: required) and plain (no task), each
// working for its ms argument.
func serveTasks(t *testing.T, ho httpapi.Options) string {
	t.Helper()
	ms := &catalog.Field{Name: "ms", Type: catalog.Integer, Description: "How long", Required: false}
	tool := func(name, task string) *catalog.Tool {
		return &catalog.Tool{Name: name, Description: name, Task: task, MCPName: name,
			Request: catalog.Message{Fields: []*catalog.Field{ms}}}
	}
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".",
		Tools: []*catalog.Tool{tool("job", catalog.TaskOptional), tool("must", catalog.TaskRequired), tool("plain", "")}}}}
	cat.Seal()
	work := func(name string) plugins.Handler {
		return plugins.Handle(name, func(ctx context.Context, a struct {
			Ms int `json:"ms"`
		}) (*plugins.Result, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			}
			return plugins.Text(fmt.Sprintf("%s worked %d ms", name, a.Ms)), nil
		})
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"jobs": runtime.Local(work("job"), work("must"), work("plain"))}); err != nil {
		t.Fatal(err)
	}
	m := tasks.New(rt, tasks.Options{Store: taskstore.NewMemory(), Window: 50 * time.Millisecond, PollInterval: 500 * time.Millisecond})
	t.Cleanup(m.Close)
	ho.MCP.Tasks = m
	ts := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{Tasks: m}), ho))
	t.Cleanup(ts.Close)
	return ts.URL
}

// taskParams are the params of a 2026-07-28 request, declaring the Tasks
// extension or not.
func taskParams(declare bool, kv ...any) map[string]any {
	meta := runtimetest.Meta2026("2026-07-28")
	if declare {
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{tasksExt: map[string]any{}}}
	}
	p := map[string]any{"_meta": meta}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i].(string)] = kv[i+1]
	}
	return p
}

// taskRPC sends a tasks/* request with its routing headers.
func taskRPC(t *testing.T, url, method, id string, declare bool, header map[string]string, kv ...any) runtimetest.RPCAnswer {
	t.Helper()
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": id}
	for k, v := range header {
		h[k] = v
	}
	return runtimetest.RPC(t, url, method, taskParams(declare, append([]any{"taskId", id}, kv...)...), h)
}

func TestTasksOverMCP(t *testing.T) {
	url := serveTasks(t, httpapi.Options{})
	v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28"}

	r := runtimetest.RPC(t, url, "server/discover", taskParams(false), v2026)
	if ext, _ := r.Result["capabilities"].(map[string]any)["extensions"].(map[string]any); ext[tasksExt] == nil {
		t.Errorf("server/discover capabilities %v, want extensions[%q]", r.Result["capabilities"], tasksExt)
	}

	// A client without the extension: a plain call for an optional tool,
	// -32021 for a required one and for the tasks/* methods.
	r = runtimetest.RPC(t, url, "tools/call", taskParams(false, "name", "job", "arguments", map[string]any{"ms": 200}), v2026)
	if r.Error != nil || r.Result["resultType"] != "complete" || r.Result["taskId"] != nil || !strings.Contains(fmt.Sprint(r.Result["content"]), "job worked 200 ms") {
		t.Errorf("optional tool without the extension = %d %v %+v, want its result", r.Status, r.Result, r.Error)
	}
	r = runtimetest.RPC(t, url, "tools/call", taskParams(false, "name", "must", "arguments", map[string]any{}), v2026)
	if r.Error == nil || r.Error.Code != -32021 || fmt.Sprint(r.Error.Data) != fmt.Sprint(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExt: map[string]any{}}}}) {
		t.Errorf("required tool without the extension = %d %v %+v, want -32021 naming it", r.Status, r.Result, r.Error)
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if r := taskRPC(t, url, method, "x", false, nil); r.Error == nil || r.Error.Code != -32021 || r.Status != http.StatusBadRequest {
			t.Errorf("%s without the extension = %d %+v, want 400 -32021", method, r.Status, r.Error)
		}
	}

	// With it: a fast call is answered at once; a slow one is a task.
	r = runtimetest.RPC(t, url, "tools/call", taskParams(true, "name", "job", "arguments", map[string]any{"ms": 0}), v2026)
	if r.Result["resultType"] != "complete" || r.Result["taskId"] != nil {
		t.Errorf("fast call with the extension = %v %+v, want a plain result", r.Result, r.Error)
	}
	r = runtimetest.RPC(t, url, "tools/call", taskParams(true, "name", "must", "arguments", map[string]any{"ms": 400}), v2026)
	id, _ := r.Result["taskId"].(string)
	if r.Result["resultType"] != "task" || id == "" || r.Result["status"] != "working" || r.Result["ttlMs"] == nil || r.Result["pollIntervalMs"] != float64(500) {
		t.Fatalf("slow call with the extension = %v %+v, want a CreateTaskResult", r.Result, r.Error)
	}
	got := taskRPC(t, url, "tasks/get", id, true, nil)
	if got.Result["taskId"] != id || got.Result["resultType"] != "complete" {
		t.Fatalf("tasks/get right after = %v %+v", got.Result, got.Error)
	}
	deadline := time.Now().Add(5 * time.Second)
	for got.Result["status"] == "working" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		got = taskRPC(t, url, "tasks/get", id, true, nil)
	}
	if res, _ := got.Result["result"].(map[string]any); got.Result["status"] != "completed" || !strings.Contains(fmt.Sprint(res["content"]), "must worked 400 ms") {
		t.Fatalf("tasks/get at the end = %v %+v, want completed with the result", got.Result, got.Error)
	}
	// Cancel of a finished task: the empty ack, and nothing changes.
	c := taskRPC(t, url, "tasks/cancel", id, true, nil)
	if c.Error != nil || len(c.Result) != 1 || c.Result["resultType"] != "complete" {
		t.Errorf("tasks/cancel of a finished task = %v %+v, want {resultType: complete}", c.Result, c.Error)
	}
	if got := taskRPC(t, url, "tasks/get", id, true, nil); got.Result["status"] != "completed" {
		t.Errorf("after cancel, status %v", got.Result["status"])
	}

	// Bad input.
	for _, bad := range []string{"no-such-task", taskstore.NewID(), id + "x", strings.Repeat("a", 300)} {
		r := taskRPC(t, url, "tasks/get", bad, true, nil)
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "Failed to retrieve task: Task not found" {
			t.Errorf("tasks/get %.20q = %+v, want -32602 Task not found", bad, r.Error)
		}
	}
	if r := taskRPC(t, url, "tasks/get", id, true, map[string]string{"Mcp-Name": "another"}); r.Status != http.StatusBadRequest || r.Error == nil || r.Error.Code != -32020 {
		t.Errorf("tasks/get with a mismatched Mcp-Name = %d %+v, want 400 -32020", r.Status, r.Error)
	}
	if r := taskRPC(t, url, "tasks/get", id, true, map[string]string{"Mcp-Method": "tasks/cancel"}); r.Status != http.StatusBadRequest || r.Error == nil || r.Error.Code != -32020 {
		t.Errorf("tasks/get with a mismatched Mcp-Method = %d %+v, want 400 -32020", r.Status, r.Error)
	}
	for _, removed := range []string{"tasks/result", "tasks/list"} {
		if r := taskRPC(t, url, removed, id, true, nil); r.Error == nil || r.Error.Code != -32601 {
			t.Errorf("%s = %+v, want -32601", removed, r.Error)
		}
	}
}

// TestTasksBelongToTheirCaller: with OAuth, a task belongs to the subject
// and client that started it. Anyone else who names its id, for any
// method, gets exactly the bytes an id that does not exist gets, and
// changes nothing.
func TestTasksBelongToTheirCaller(t *testing.T) {
	iss := runtimetest.NewIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: runtimetest.TestResource})
	if err != nil {
		t.Fatal(err)
	}
	url := serveTasks(t, httpapi.Options{OAuth: v})
	as := func(token string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Authorization": "Bearer " + token}
	}
	alice, bob := iss.Token(t, jose.RS256, "alice", ""), iss.Token(t, jose.ES256, "bob", "")
	aliceElsewhere := iss.TokenFor(t, "alice", "another-client")
	r := runtimetest.RPC(t, url, "tools/call", taskParams(true, "name", "job", "arguments", map[string]any{"ms": 60_000}), as(alice))
	id, _ := r.Result["taskId"].(string)
	if id == "" {
		t.Fatalf("alice's call = %d %v %+v, want a task", r.Status, r.Result, r.Error)
	}
	raw := func(token, method, id string, kv ...any) string {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": taskParams(true, append([]any{"taskId", id}, kv...)...)})
		h := as(token)
		h["Mcp-Method"], h["Mcp-Name"], h["Accept"] = method, id, "application/json, text/event-stream"
		res := runtimetest.Do(t, "POST", url+"/mcp", string(body), h)
		return fmt.Sprint(res.Status, " ", res.Body)
	}
	unknown := taskstore.NewID()
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		want := raw(bob, method, unknown, "inputResponses", map[string]any{})
		for name, token := range map[string]string{"another user": bob, "the same user through another client": aliceElsewhere} {
			if got := raw(token, method, id, "inputResponses", map[string]any{}); got != want {
				t.Errorf("%s of alice's task by %s = %s\nwant the answer for an unknown id: %s", method, name, got, want)
			}
		}
	}
	if got := taskRPC(t, url, "tasks/get", id, true, as(alice)); got.Result["status"] != "working" {
		t.Errorf("alice's task after the others' cancels = %v %+v, want working", got.Result, got.Error)
	}
	if c := taskRPC(t, url, "tasks/cancel", id, true, as(alice)); c.Error != nil {
		t.Errorf("alice's cancel = %+v", c.Error)
	}
	if got := taskRPC(t, url, "tasks/get", id, true, as(alice)); got.Result["status"] != "cancelled" {
		t.Errorf("alice's task after her cancel = %v", got.Result["status"])
	}
}

// TestTasksExtensionFollowsTools: a server with a task Manager declares
// the Tasks extension when a tool runs as a task, or when its options
// declare it (toolc dev, whose next load may bring one), and not
// otherwise, at server/discover and at a session's initialize.
func TestTasksExtensionFollowsTools(t *testing.T) {
	tool := func(name, task string) *catalog.Tool {
		return &catalog.Tool{Name: name, Description: name, Task: task, MCPName: name}
	}
	catalogOf := func(tools ...*catalog.Tool) *catalog.Catalog {
		cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".", Tools: tools}}}
		cat.Seal()
		return cat
	}
	done := plugins.Handle("plain", func(context.Context, struct{}) (*plugins.Result, error) { return plugins.Text("ok"), nil })
	jobs := map[string]runtime.Dispatcher{"jobs": runtime.Local(done, plugins.Handle("job", func(context.Context, struct{}) (*plugins.Result, error) { return plugins.Text("ok"), nil }))}
	plain, withJob := catalogOf(tool("plain", "")), catalogOf(tool("plain", ""), tool("job", catalog.TaskOptional))

	if mcpserver.FeaturesOf(plain).Tasks || !mcpserver.FeaturesOf(withJob).Tasks {
		t.Errorf("FeaturesOf: Tasks = %v without a task tool and %v with one; want false, true", mcpserver.FeaturesOf(plain).Tasks, mcpserver.FeaturesOf(withJob).Tasks)
	}
	for _, tc := range []struct {
		name     string
		cat      *catalog.Catalog
		declared bool
		manager  bool
		want     bool
	}{
		{"no task tool", plain, false, true, false},
		{"a task tool", withJob, false, true, true},
		{"declared", plain, true, true, true},
		{"a task tool, no manager", withJob, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New(runtime.Options{})
			if _, err := rt.Swap(tc.cat, jobs); err != nil {
				t.Fatal(err)
			}
			opts := mcpserver.Options{Declared: mcpserver.Features{Tasks: tc.declared}}
			if tc.manager {
				m := tasks.New(rt, tasks.Options{Store: taskstore.NewMemory()})
				t.Cleanup(m.Close)
				opts.Tasks = m
			}
			ts := httptest.NewServer(mcpserver.NewHTTPHandler(rt, mcpserver.New(rt, opts), mcpserver.HTTPOptions{Tasks: opts.Tasks}))
			t.Cleanup(ts.Close)

			r := runtimetest.RPC(t, ts.URL+"/mcp", "server/discover", taskParams(false), map[string]string{"MCP-Protocol-Version": "2026-07-28"})
			ext, _ := r.Result["capabilities"].(map[string]any)["extensions"].(map[string]any)
			if got := ext[tasksExt] != nil; got != tc.want {
				t.Errorf("server/discover: extensions[%q] declared = %v, want %v (capabilities %v)", tasksExt, got, tc.want, r.Result["capabilities"])
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, got := s.InitializeResult().Capabilities.Extensions[tasksExt]
			if got != tc.want {
				t.Errorf("initialize: extensions[%q] declared = %v, want %v", tasksExt, got, tc.want)
			}
		})
	}
}
