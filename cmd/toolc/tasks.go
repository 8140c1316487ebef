package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/boltstore"
	"github.com/toolc/toolc/taskstore/redisstore"
)

// openTasks opens the task store that --task-store names, and the Manager
// that runs the calls of task tools on it, into sf.tasks; it returns what
// closes them. Without --task-store, toolc serve keeps its tasks on disk
// (defaultTaskFile), and toolc dev in memory, as toolc serve --stdio does:
// its tasks cannot outlive its one client, which started it.
func openTasks(e env, cmd string, rt *runtime.Runtime, sf *serveFlags, ln net.Listener) (func(), error) {
	url := sf.taskStore
	switch {
	case url == "" && cmd == "serve" && !sf.stdio:
	case url == "":
		url = "memory:"
	}
	var store taskstore.Store
	var err error
	if url == "" {
		// The default, which no one asked for: a container without $HOME
		// or with a read-only file system, say, is served anyway, with its
		// tasks in memory, and told so.
		var file string
		if file, err = defaultTaskFile(ln.Addr()); err == nil {
			store, err = boltstore.Open(file)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "toolc %s: warning: tasks are kept in memory and lost on a restart (%v); give --task-store file:PATH to keep them\n", cmd, err)
			store = taskstore.NewMemory()
		}
	} else if store, err = openTaskStore(url); err != nil {
		return nil, usagef("--task-store %s: %v", url, err)
	}
	sf.tasks = tasks.New(rt, tasks.Options{Store: store, Timeout: sf.taskTimeout, TTL: sf.taskTTL, Logger: logger(e)})
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
	case strings.HasPrefix(url, "file:"):
		path := strings.TrimPrefix(url, "file:")
		if path == "" {
			return nil, fmt.Errorf("file: needs a path, as in file:/var/lib/toolc/tasks.db")
		}
		return boltstore.Open(path)
	case strings.HasPrefix(url, "redis://"):
		return redisstore.Open(context.Background(), url)
	}
	return nil, fmt.Errorf("unknown store: give memory:, file:PATH or redis://HOST:PORT/DB")
}

// defaultTaskFile is where toolc serve keeps its tasks without
// --task-store: in the user's state directory ($XDG_STATE_HOME, else
// ~/.local/state), one file per address served, so that a restart on the
// same address finds its tasks, and two servers never share a file.
func defaultTaskFile(addr net.Addr) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no state directory: %v", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	name := strings.NewReplacer(":", "-", "[", "", "]", "", "%", "-").Replace(addr.String())
	return filepath.Join(dir, "toolc", "tasks", name+".db"), nil
}
