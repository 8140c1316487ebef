package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/taskstore/storetest"
)

// TestTasksScaleOut runs three toolc serve replicas of examples/conformance
// behind haproxy (round robin, haproxyFront), sharing a real redis-server
// as their task store. Clients start slow_compute tasks through the
// balancer, and poll each with tasks/get through it: each request may
// reach any replica, and each task is answered by the ones that did not
// create it. Then the replica that runs a long task is killed (SIGKILL):
// its handler dies with it, and the task must end failed, said both to a
// poller through the balancer and on a subscriptions/listen held on a
// surviving replica, once the dead replica's lease lapses (15 s), not
// stay working forever.
//
// Needs haproxy (TOOLC_HAPROXY, as TestScaleOut) and redis-server. The
// short version, in every run, has 24 tasks of 1 s, 8 at a time;
// TOOLC_TASKS_LOAD=1 runs 600, 64 at a time, and logs the figures that
// BENCHMARKS.md records.
func TestTasksScaleOut(t *testing.T) {
	haproxy := os.Getenv("TOOLC_HAPROXY")
	if haproxy == "" {
		t.Skip("needs haproxy: set TOOLC_HAPROXY to its binary (scripts/test does with TOOLC_SCALEOUT=1)")
	}
	store := storetest.RedisServer(t)
	t.Parallel()
	tasks, workers := 24, 8
	if os.Getenv("TOOLC_TASKS_LOAD") == "1" {
		tasks, workers = 600, 64
	}
	cache := t.TempDir()
	replicas := map[string]*exec.Cmd{}
	addrs := make([]string, 3)
	for i := range addrs {
		cmd := toolcCmd(t, "serve", "--http", "127.0.0.1:0", "--task-store", store, "./examples/conformance")
		cmd.Env = append(cmd.Env, "TOOLC_CACHE="+cache)
		url, _ := startServeCmd(t, cmd)
		addrs[i] = strings.TrimPrefix(url, "http://")
		replicas[fmt.Sprintf("r%d", i)] = cmd
	}
	lb := strings.TrimSuffix(haproxyFront(t, haproxy, addrs), "/mcp")

	// The load: each worker starts a task and polls it to its end.
	type outcome struct {
		createdBy string
		polledBy  []string
		create    time.Duration
		gets      []time.Duration
		total     time.Duration
		err       error
	}
	results := make([]outcome, tasks)
	jobs := make(chan int)
	var wg sync.WaitGroup
	began := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				o := &results[i]
				start := time.Now()
				r, by, err := taskRPC(lb, "tools/call", "", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1, "label": fmt.Sprint(i)}})
				o.create, o.createdBy = time.Since(start), by
				id, _ := r["taskId"].(string)
				if err == nil && id == "" {
					err = fmt.Errorf("tools/call = %v, want a task", r)
				}
				for err == nil {
					time.Sleep(100 * time.Millisecond)
					at := time.Now()
					r, by, err = taskRPC(lb, "tasks/get", id, map[string]any{"taskId": id})
					o.gets = append(o.gets, time.Since(at))
					o.polledBy = append(o.polledBy, by)
					if err != nil || r["status"] == "working" {
						if time.Since(start) > 45*time.Second {
							err = fmt.Errorf("task %d still %v after 45 s", i, r["status"])
						}
						continue
					}
					if want := fmt.Sprintf(`computed "%d" in 1 s`, i); r["status"] != "completed" || !strings.Contains(fmt.Sprint(r["result"]), want) {
						err = fmt.Errorf("task %d = %v, want completed with %q", i, r, want)
					}
					break
				}
				o.total, o.err = time.Since(start), err
			}
		}()
	}
	for i := range tasks {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(began)

	var creates, gets, totals []time.Duration
	created, foreign := map[string]int{}, 0
	for i, o := range results {
		if o.err != nil {
			t.Fatalf("task %d: %v", i, o.err)
		}
		creates, totals = append(creates, o.create), append(totals, o.total)
		gets = append(gets, o.gets...)
		created[o.createdBy]++
		for _, by := range o.polledBy {
			if by != o.createdBy {
				foreign++
			}
		}
	}
	if len(created) < 2 || foreign == 0 {
		t.Errorf("tasks created by %v, %d polls answered by another replica than the task's: the balancer did not spread them", created, foreign)
	}
	t.Logf("%d tasks of 1 s, %d at a time, through haproxy to 3 replicas on redis: %.1f tasks/s; created by %v; %d of %d polls answered by a replica other than the task's",
		tasks, workers, float64(tasks)/elapsed.Seconds(), created, foreign, len(gets))
	t.Logf("tools/call to CreateTaskResult p50 %v p99 %v; tasks/get p50 %v p99 %v; start to completed seen p50 %v p99 %v",
		pct(creates, 50), pct(creates, 99), pct(gets, 50), pct(gets, 99), pct(totals, 50), pct(totals, 99))

	// The kill: a long task, watched by a listen on a replica that lives,
	// and its runner killed.
	r, runner, err := taskRPC(lb, "tools/call", "", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 120}})
	id, _ := r["taskId"].(string)
	if err != nil || id == "" || replicas[runner] == nil {
		t.Fatalf("the long task: %v %v, by %q", r, err, runner)
	}
	var watcher string
	for name := range replicas {
		if name != runner {
			watcher = addrs[name[1]-'0']
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	told := listenTasks(t, ctx, "http://"+watcher, id)
	if m, ok := <-told; !ok || m["status"] != "working" {
		t.Fatalf("first notification of the long task = %v (stream open: %v), want working", m, ok)
	}
	killed := time.Now()
	replicas[runner].Process.Signal(syscall.SIGKILL)
	var failedAt time.Duration
	for {
		r, _, err := taskRPC(lb, "tasks/get", id, map[string]any{"taskId": id})
		if err == nil && r["status"] == "failed" {
			failedAt = time.Since(killed)
			if !strings.Contains(fmt.Sprint(r["error"]), "the replica running the task stopped before the task finished") {
				t.Errorf("the dead replica's task = %v, want failed saying so", r)
			}
			break
		}
		if err == nil && r["status"] != "working" {
			t.Fatalf("the dead replica's task = %v, want working, then failed", r)
		}
		if time.Since(killed) > 40*time.Second {
			t.Fatalf("the dead replica's task is %v (%v) 40 s after the kill, want failed", r["status"], err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if m, ok := <-told; !ok || m["status"] != "failed" {
		t.Errorf("notification after the kill = %v (stream open: %v), want failed", m, ok)
	}
	t.Logf("SIGKILL of %s, the replica running a task: tasks/get through haproxy answered failed %v after the kill (lease 15 s)", runner, failedAt.Round(10*time.Millisecond))
}

// taskRPC posts a 2026-07-28 request of a client of the Tasks extension to
// base's /mcp, with the routing headers (Mcp-Name: the task id, if any),
// and returns its result and the replica that answered (X-Served-By). It
// may run on any goroutine.
func taskRPC(base, method, taskID string, params map[string]any) (map[string]any, string, error) {
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if taskID != "" {
		req.Header.Set("Mcp-Name", taskID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var out struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, "", fmt.Errorf("%s: %d %q: %v", method, resp.StatusCode, data, err)
	}
	if out.Error != nil {
		return nil, "", fmt.Errorf("%s: %s", method, out.Error)
	}
	return out.Result, resp.Header.Get("X-Served-By"), nil
}

// listenTasks opens a subscriptions/listen for the task on base and sends
// the params of each notifications/tasks on the channel, which is closed
// when the stream ends.
func listenTasks(t *testing.T, ctx context.Context, base, id string) <-chan map[string]any {
	t.Helper()
	meta := runtimetest.Meta2026("2026-07-28")
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
		"params": map[string]any{"_meta": meta, "notifications": map[string]any{"taskIds": []string{id}}}})
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan map[string]any, 16)
	go func() {
		// The stream ends with ctx at the latest, and the channel with it.
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data: ")
			var m struct {
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if ok && json.Unmarshal([]byte(d), &m) == nil && m.Method == "notifications/tasks" {
				ch <- m.Params
			}
		}
	}()
	return ch
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}
