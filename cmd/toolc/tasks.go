package main

import (
	"context"
	"fmt"
	"net"

	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/open"
)

// openTasks opens the task store that --task-store names, and the Manager
// that runs the calls of task tools on it, into sf.tasks; it returns what
// closes them. Without --task-store, toolc serve keeps its tasks on disk
// (open.Default), and toolc dev in memory, as toolc serve --stdio does:
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
		// The default, which no one asked for, falls back to memory.
		if store, err = open.Default(ln.Addr()); err != nil {
			fmt.Fprintf(e.stderr, "toolc %s: warning: tasks are kept in memory and lost on a restart (%v); give --task-store file:PATH to keep them\n", cmd, err)
		}
	} else if store, err = open.URL(context.Background(), url); err != nil {
		return nil, usagef("--task-store %s: %v", url, err)
	}
	sf.tasks = tasks.New(rt, tasks.Options{Store: store, Timeout: sf.taskTimeout, TTL: sf.taskTTL, Logger: logger(e)})
	return func() {
		sf.tasks.Close()
		store.Close()
	}, nil
}
