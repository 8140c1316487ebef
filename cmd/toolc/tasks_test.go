package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/taskstore/boltstore"
)

// taskCall is a 2026-07-28 tools/call of slow_compute from a client of the
// Tasks extension; it returns the task id.
func taskCall(t *testing.T, url string, seconds int) string {
	t.Helper()
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	r := runtimetest.RPC(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds}, "_meta": meta},
		map[string]string{"MCP-Protocol-Version": "2026-07-28"})
	id, _ := r.Result["taskId"].(string)
	if r.Result["resultType"] != "task" || id == "" {
		t.Fatalf("slow_compute %d s = %d %v %+v, want a task", seconds, r.Status, r.Result, r.Error)
	}
	return id
}

// taskGet is tasks/get of the task.
func taskGet(t *testing.T, url, id string) map[string]any {
	t.Helper()
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	r := runtimetest.RPC(t, url, "tasks/get", map[string]any{"taskId": id, "_meta": meta},
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": id})
	if r.Error != nil {
		t.Fatalf("tasks/get %s = %+v", id, r.Error)
	}
	return r.Result
}

// TestTasksSurviveRestart: with the embedded store, toolc serve's tasks
// outlive the process. A finished task's result is there after a restart;
// a task still running when toolc stopped (SIGTERM) or was killed
// (SIGKILL) is failed, with a message that says so, never lost and never
// working forever.
func TestTasksSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "file:" + filepath.Join(dir, "tasks.db")
	cache := t.TempDir() // one plugin build for the three starts
	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(toolcBin, "serve", "--http", "127.0.0.1:0", "--task-store", store, "./examples/conformance")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "TOOLC_CACHE="+cache)
		url, _ := startServeCmd(t, cmd)
		return cmd, url
	}
	cmd, url := start()
	done := taskCall(t, url, 1)
	stopped := taskCall(t, url, 60)
	deadline := time.Now().Add(20 * time.Second)
	for taskGet(t, url, done)["status"] != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("the 1 s task is %v after 20 s", taskGet(t, url, done))
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	cmd, url = start()
	if got := taskGet(t, url, done); got["status"] != "completed" || !strings.Contains(fmt.Sprint(got["result"]), `computed "" in 1 s`) {
		t.Errorf("a finished task after a restart = %v, want completed with its result", got)
	}
	if got := taskGet(t, url, stopped); got["status"] != "failed" || !strings.Contains(fmt.Sprint(got["error"]), "shut down before it finished") {
		t.Errorf("a task running at SIGTERM, after the restart = %v, want failed saying the server shut down", got)
	}
	killed := taskCall(t, url, 60)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	_, url = start()
	got := taskGet(t, url, killed)
	errObj, _ := got["error"].(map[string]any)
	if got["status"] != "failed" || errObj["message"] != boltstore.Interrupted || errObj["code"] != float64(-32603) {
		b, _ := json.Marshal(got)
		t.Errorf("a task running at SIGKILL, after the restart = %s, want failed: %s", b, boltstore.Interrupted)
	}
}

// stdioPeer is a raw 2026-07-28 client over go-sdk's command transport:
// go-sdk's clients know no tasks/* methods, so the test speaks them
// itself, over go-sdk's framing of stdio.
type stdioPeer struct {
	t    *testing.T
	conn mcp.Connection
	next int64
	// msgs are the messages read that no call has taken yet.
	msgs chan jsonrpc.Message
}

func newStdioPeer(t *testing.T, args ...string) *stdioPeer {
	t.Helper()
	cmd := toolcCmd(t, append([]string{"serve", "--stdio"}, args...)...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := (&mcp.CommandTransport{Command: cmd}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := &stdioPeer{t: t, conn: conn, msgs: make(chan jsonrpc.Message, 256)}
	go func() {
		defer close(p.msgs)
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				return
			}
			p.msgs <- m
		}
	}()
	t.Cleanup(func() { conn.Close(); cancel() })
	return p
}

// send writes a request with the Tasks extension declared, and returns
// its id.
func (p *stdioPeer) send(method string, params map[string]any) jsonrpc.ID {
	p.t.Helper()
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	params["_meta"] = meta
	raw, _ := json.Marshal(params)
	p.next++
	id, err := jsonrpc.MakeID(fmt.Sprintf("r%d", p.next))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.conn.Write(context.Background(), &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		p.t.Fatal(err)
	}
	return id
}

// read returns the next message, within three minutes (the first call
// waits for the plugin's build, on a loaded machine).
func (p *stdioPeer) read() jsonrpc.Message {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatal("toolc serve --stdio hung up")
		}
		return m
	case <-time.After(3 * time.Minute):
		p.t.Fatal("no message from toolc serve --stdio in three minutes")
	}
	return nil
}

// call sends a request and returns its result, skipping notifications.
func (p *stdioPeer) call(method string, params map[string]any) map[string]any {
	p.t.Helper()
	id := p.send(method, params)
	for {
		if r, ok := p.read().(*jsonrpc.Response); ok && r.ID == id {
			if r.Error != nil {
				p.t.Fatalf("%s: %v", method, r.Error)
			}
			var out map[string]any
			json.Unmarshal(r.Result, &out)
			return out
		}
	}
}

// TestTasksOverStdio: toolc serve --stdio serves the Tasks extension: a
// slow call becomes a task, polled with tasks/get to its result, another
// is cancelled, and a subscriptions/listen naming a task is told its
// status on the session until it ends.
func TestTasksOverStdio(t *testing.T) {
	t.Parallel()
	p := newStdioPeer(t, "./examples/conformance")
	start := func(seconds int) string {
		t.Helper()
		r := p.call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds}})
		id, _ := r["taskId"].(string)
		if r["resultType"] != "task" || id == "" {
			t.Fatalf("slow_compute %d s over stdio = %v, want a task", seconds, r)
		}
		return id
	}
	id := start(1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := p.call("tasks/get", map[string]any{"taskId": id})
		if r["status"] == "completed" {
			if !strings.Contains(fmt.Sprint(r["result"]), `computed "" in 1 s`) {
				t.Errorf("completed task = %v, want its result", r)
			}
			break
		}
		if r["status"] != "working" || time.Now().After(deadline) {
			t.Fatalf("tasks/get = %v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A listen for a long task: acknowledged for it, told it is working,
	// then cancelled (by tasks/cancel on the same session), then the
	// listen's result.
	id = start(60)
	listen := p.send("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id, "nope"}}})
	var told []string
	acked, cancelled := false, false
	for {
		m := p.read()
		if r, ok := m.(*jsonrpc.Response); ok {
			if r.ID == listen {
				break
			}
			continue // tasks/cancel's ack
		}
		req := m.(*jsonrpc.Request)
		var params map[string]any
		json.Unmarshal(req.Params, &params)
		switch req.Method {
		case "notifications/subscriptions/acknowledged":
			if fmt.Sprint(params["notifications"]) != fmt.Sprint(map[string]any{"taskIds": []any{id}}) {
				t.Fatalf("acknowledgement = %v, want taskIds [%s]", params, id)
			}
			acked = true
		case "notifications/tasks":
			if !acked || params["taskId"] != id {
				t.Fatalf("notification %v before the acknowledgement, or of another task", params)
			}
			told = append(told, params["status"].(string))
			if !cancelled {
				cancelled = true
				p.send("tasks/cancel", map[string]any{"taskId": id})
			}
		}
	}
	if fmt.Sprint(told) != "[working cancelled]" {
		t.Errorf("statuses told over stdio = %v, want [working cancelled]", told)
	}
	if r := p.call("tasks/get", map[string]any{"taskId": id}); r["status"] != "cancelled" {
		t.Errorf("tasks/get after tasks/cancel = %v", r)
	}
}
