package main

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
)

// openTasks opens the task store that --task-store names and the Manager
// that runs the calls of task tools on it, into sf.tasks, and returns
// what closes them.
func openTasks(e env, rt *runtime.Runtime, sf *serveFlags) (func(), error) {
	url := *sf.taskStore
	if url == "" {
		url = "memory:"
	}
	store, err := openTaskStore(url)
	if err != nil {
		return nil, usagef("--task-store %s: %v", url, err)
	}
	sf.tasks = tasks.New(rt, tasks.Options{Store: store, Timeout: *sf.taskTimeout, TTL: *sf.taskTTL, Logger: logger(e)})
	return func() {
		sf.tasks.Close()
		store.Close()
	}, nil
}

// openTaskStore opens the store a --task-store URL names.
func openTaskStore(url string) (taskstore.Store, error) {
	switch {
	case url == "memory:":
		return taskstore.NewMemory(), nil
	case strings.HasPrefix(url, "file:"), strings.HasPrefix(url, "redis://"):
		return nil, fmt.Errorf("not supported yet")
	}
	return nil, fmt.Errorf("unknown store: give memory:, file:PATH or redis://HOST:PORT/DB")
}
