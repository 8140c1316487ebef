package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
