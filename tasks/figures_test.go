package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/boltstore"
	"github.com/toolc/toolc/taskstore/redisstore"
	"github.com/toolc/toolc/taskstore/storetest"
)

// TestTaskFigures measures what BENCHMARKS.md reports of tasks, for each
// store: the overhead of starting a task and polling it to completion
// against the same call made synchronously; memory and store size at
// 10,000 finished tasks; and tasks/get latency at p50 and p99 with 1 and
// 64 pollers. It runs only with TOOLC_TASK_FIGURES=1 (it takes a minute).
func TestTaskFigures(t *testing.T) {
	if os.Getenv("TOOLC_TASK_FIGURES") == "" {
		t.Skip("TOOLC_TASK_FIGURES=1 to measure")
	}
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".",
		Tools: []*catalog.Tool{{Name: "echo", Description: "Echo", Task: catalog.TaskOptional, Request: catalog.Message{Fields: []*catalog.Field{
			{Name: "text", Type: catalog.String, Description: "text", Required: true}}}}}}}}
	cat.Seal()
	rt := runtime.New(runtime.Options{})
	echo := plugins.Handle("echo", func(_ context.Context, a struct {
		Text string `json:"text"`
	}) (*plugins.Result, error) {
		return plugins.Text(a.Text), nil
	})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"jobs": runtime.Local(echo)}); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"text":"a result of about sixty bytes, as a small tool returns it"}`)
	ctx := context.Background()

	// The synchronous call, for comparison.
	const n = 2000
	begin := time.Now()
	for range n {
		if _, err := rt.Call(ctx, "echo", args); err != nil {
			t.Fatal(err)
		}
	}
	syncPer := time.Since(begin) / n
	fmt.Printf("sync call: %v per call\n", syncPer)

	redisURL := storetest.RedisServer(t)
	stores := []struct {
		name string
		open func() (taskstore.Store, func() int64)
	}{
		{"memory:", func() (taskstore.Store, func() int64) { return taskstore.NewMemory(), func() int64 { return heap() } }},
		{"file:", func() (taskstore.Store, func() int64) {
			path := filepath.Join(t.TempDir(), "tasks.db")
			s, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return s, func() int64 { fi, _ := os.Stat(path); return fi.Size() }
		}},
		{"redis://", func() (taskstore.Store, func() int64) {
			s, err := redisstore.Open(ctx, redisURL)
			if err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(redisURL, "redis://"), "/0")})
			return s, func() int64 {
				info, err := rdb.Info(ctx, "memory").Result()
				if err != nil {
					return -1
				}
				for line := range strings.Lines(info) {
					if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
						n, _ := strconv.ParseInt(v, 10, 64)
						return n
					}
				}
				return -1
			}
		}},
	}
	for _, st := range stores {
		store, size := st.open()
		m := tasks.New(rt, tasks.Options{Store: store, MaxPerCaller: 20_000, MaxTasks: 20_000, PollInterval: time.Millisecond})
		// Start and poll to completion, one task after another.
		const runs = 300
		begin := time.Now()
		var ids []string
		for range runs {
			_, task, err := m.Start(ctx, tasks.Call{Tool: "echo", Args: args, Input: &plugins.Input{}, Always: true})
			if err != nil {
				t.Fatal(err)
			}
			for {
				got, err := m.Get(ctx, "", task.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status == taskstore.Completed {
					break
				}
				time.Sleep(100 * time.Microsecond) // a client that polls as fast as it can
			}
			ids = append(ids, task.ID)
		}
		per := time.Since(begin) / runs
		fmt.Printf("%-9s start+poll to completion: %v per task (%.0fx the sync call)\n", st.name, per, float64(per)/float64(syncPer))

		// 10,000 finished tasks.
		before := size()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 32)
		for range 10_000 - runs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				_, task, err := m.Start(ctx, tasks.Call{Tool: "echo", Args: args, Input: &plugins.Input{}, Always: true})
				if err != nil {
					t.Error(err)
					return
				}
				for {
					if got, err := m.Get(ctx, "", task.ID); err != nil || got.Status == taskstore.Completed {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
		}
		wg.Wait()
		if s := size(); s >= 0 {
			what := map[string]string{"memory:": "heap", "file:": "store file", "redis://": "Redis used_memory"}[st.name]
			fmt.Printf("%-9s at 10,000 finished tasks: %s %.1f MB (%.1f MB before)\n", st.name, what, float64(s)/1e6, float64(before)/1e6)
		}

		// tasks/get latency, 1 and 64 pollers.
		for _, pollers := range []int{1, 64} {
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			for p := range pollers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine := make([]time.Duration, 0, 2000/pollers+1)
					for i := range max(2000/pollers, 50) {
						id := ids[(p*31+i)%len(ids)]
						s := time.Now()
						if _, err := m.Get(ctx, "", id); err != nil {
							t.Error(err)
							return
						}
						mine = append(mine, time.Since(s))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			slices.Sort(lat)
			fmt.Printf("%-9s tasks/get with %2d pollers: p50 %v, p99 %v (%d gets)\n", st.name, pollers, lat[len(lat)/2], lat[len(lat)*99/100], len(lat))
		}
		m.Close()
		store.Close()
	}
}

func heap() int64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
