package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
)

// listenEvents opens a 2026-07-28 subscriptions/listen with notifications
// and sends each message of its stream, decoded, on the channel, which is
// closed when the stream ends.
func listenEvents(t *testing.T, ctx context.Context, url string, notifications map[string]any, declare bool) (*http.Response, <-chan map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
		"params": taskParams(declare, "notifications", notifications)})
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", strings.NewReader(string(body)))
	for k, v := range map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan map[string]any, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				line = "data: " + line
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					ch <- m
				}
			}
		}
	}()
	return resp, ch
}

// next returns the next message of a listen stream, or fails.
func next(t *testing.T, ch <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("the listen stream ended")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message on the listen stream in 10 s")
	}
	return nil
}

func TestTaskStatusNotifications(t *testing.T) {
	url := serveTasks(t, httpapi.Options{})
	v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
	start := func(ms int) string {
		r := runtimetest.RPC(t, url, "tools/call", taskParams(true, "name", "must", "arguments", map[string]any{"ms": ms}), v2026)
		id, _ := r.Result["taskId"].(string)
		if id == "" {
			t.Fatalf("tools/call = %v %+v, want a task", r.Result, r.Error)
		}
		return id
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A listen for a task of the caller's and one that does not exist:
	// acknowledged for the first alone, which is told working, then
	// completed with its result, after which the stream ends with the
	// listen's result.
	// 2 s: the listen must open while the task works, on a loaded machine.
	id := start(2000)
	_, ch := listenEvents(t, ctx, url, map[string]any{"taskIds": []string{id, "no-such-task"}}, true)
	ack := next(t, ch)
	if ack["method"] != "notifications/subscriptions/acknowledged" || fmt.Sprint(ack["params"].(map[string]any)["notifications"]) != fmt.Sprint(map[string]any{"taskIds": []any{id}}) {
		t.Fatalf("first message = %v, want the acknowledgement for [%s]", ack, id)
	}
	var statuses []string
	for {
		m := next(t, ch)
		if m["method"] == nil {
			if m["id"] != "listen-1" || m["result"] == nil {
				t.Fatalf("last message = %v, want the listen's result", m)
			}
			break
		}
		p := m["params"].(map[string]any)
		if m["method"] != "notifications/tasks" || p["taskId"] != id || p["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "listen-1" || p["resultType"] != nil {
			t.Fatalf("notification = %v, want notifications/tasks of %s with the listen's id", m, id)
		}
		statuses = append(statuses, p["status"].(string))
		if p["status"] == "completed" && !strings.Contains(fmt.Sprint(p["result"]), "must worked 2000 ms") {
			t.Errorf("completed notification = %v, want the result", p)
		}
	}
	if len(statuses) < 2 || statuses[0] != "working" || statuses[len(statuses)-1] != "completed" {
		t.Errorf("statuses told = %v, want working first and completed last", statuses)
	}
	if _, ok := <-ch; ok {
		t.Error("the stream went on after the listen's result")
	}

	// Cancelled is told too, and a listen that also asks for the tool
	// list's changes stays open after its tasks end.
	id = start(5000)
	_, ch = listenEvents(t, ctx, url, map[string]any{"taskIds": []string{id}, "toolsListChanged": true}, true)
	ack = next(t, ch)
	if fmt.Sprint(ack["params"].(map[string]any)["notifications"]) != fmt.Sprint(map[string]any{"taskIds": []any{id}, "toolsListChanged": true}) {
		t.Fatalf("acknowledgement = %v, want the task and the list's changes", ack)
	}
	if m := next(t, ch); m["params"].(map[string]any)["status"] != "working" {
		t.Fatalf("first notification = %v, want working", m)
	}
	if r := taskRPC(t, url, "tasks/cancel", id, true, nil); r.Error != nil {
		t.Fatalf("tasks/cancel: %+v", r.Error)
	}
	if m := next(t, ch); m["params"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("after tasks/cancel = %v, want cancelled", m)
	}
	select {
	case m, ok := <-ch:
		if ok {
			t.Errorf("after the task ended, with toolsListChanged = %v, want nothing", m)
		} else {
			t.Error("the stream of a listen for the tool list's changes ended with its task")
		}
	case <-time.After(300 * time.Millisecond):
	}

	// Task ids from a client that does not declare the extension: -32021.
	resp, ch := listenEvents(t, ctx, url, map[string]any{"taskIds": []string{id}}, false)
	if m := next(t, ch); resp.StatusCode != http.StatusBadRequest || m["error"].(map[string]any)["code"] != float64(-32021) {
		t.Errorf("listen for tasks without the extension = %d %v, want 400 -32021", resp.StatusCode, m)
	}
}
