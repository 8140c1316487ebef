package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

func runDev(e env, args []string) int {
	fs := newFlags(e, "dev")
	sf := addServeFlags(fs)
	poll := fs.Duration("poll", 0, "poll the files at this interval instead of using inotify (for network or container file systems)")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return exitStatus(e.stderr, "dev", err)
	}
	tokenFromEnv(fs, &sf)
	if status := checkAuth(e, "dev", &sf); status != exitOK {
		return status
	}
	if status := checkExposure(e, "dev", sf); status != exitOK {
		return status
	}
	if status := checkSSEPoll(e, "dev", sf); status != exitOK {
		return status
	}
	secret, status := stateSecret(e, "dev", sf)
	if status != exitOK {
		return status
	}
	tp, stopTracing, status := startTracing(e, "dev")
	if status != exitOK {
		return status
	}
	defer stopTracing()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer rpc.CleanupClients()

	rt := runtime.New(runtime.Options{CallTimeout: *sf.timeout, Logger: logger(e), Audit: auditLogger(e), AuditArguments: *sf.auditArgs, TracerProvider: tp})
	closeTasks, status := openTasks(e, "dev", rt, &sf)
	if status != exitOK {
		return status
	}
	defer closeTasks()
	d, err := dev.New(dev.Options{
		Patterns: patterns,
		Runtime:  rt,
		Status:   e.stderr,
		Host:     host.Options{Stderr: e.stderr, Logger: logger(e)},
		Poll:     *poll,
		Grace:    *sf.grace,
		Logger:   logger(e),
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc dev: %v\n", err)
		return exitUsage
	}
	// ListTTL stays zero: a reload may change the tools at any moment, so
	// a tools/list is stale as soon as it is sent.
	srv := mcpserver.New(rt, mcpserver.Options{Version: moduleVersion(), Logger: logger(e), StateSecret: secret, Tasks: sf.tasks})
	// Over stdio the client that started toolc waits for the handshake,
	// and gives up within seconds (mcp-go after 5 s), while the first
	// build may take minutes: the session starts at once, and the gate
	// holds tools/list and tools/call until the first load is over. Over
	// HTTP the port opens once the load is over, as before: a client
	// retries a refused connection.
	gate := mcpserver.NewGate()
	srv.AddReceivingMiddleware(gate.Hold)
	var served chan int
	if *sf.stdio {
		served = make(chan int, 1)
		go func() {
			served <- serveMCP(ctx, stop, e, "dev", rt, srv, sf, nil)
			stop() // the client hung up: stop the build too
		}()
	}
	err = d.Start(ctx)
	gate.Open(err)
	if err != nil {
		// A load cut short because the client hung up (or a signal came)
		// ends as the session did; any other failure is a usage error,
		// as it is over HTTP.
		cut := served != nil && errors.Is(err, context.Canceled)
		if !cut {
			fmt.Fprintf(e.stderr, "toolc dev: %v\n", err)
		}
		stop()
		if served != nil {
			if status := <-served; cut {
				return status
			}
		}
		return exitUsage
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.Run(ctx); err != nil {
			fmt.Fprintf(e.stderr, "toolc dev: %v\n", err)
			stop()
		}
	}()
	if served != nil {
		status = <-served
	} else {
		status = serveMCP(ctx, stop, e, "dev", rt, srv, sf, nil)
	}
	stop()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
	}
	return status
}
