package main

import (
	"context"
	"fmt"

	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/serve"
	"github.com/toolc/toolc/upstream"
)

func runDev(e env, args []string) error {
	fs := newFlags(e, "dev")
	sf := addServeFlags(fs)
	poll := fs.Duration("poll", 0, "poll the files at this interval instead of using inotify (for network or container file systems)")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	tokenFromEnv(fs, sf)
	// ListTTL stays zero: a reload may change the tools at any moment, so
	// a tools/list is stale as soon as it is sent.
	return serveTools(e, "dev", sf, 0, func(_ context.Context, rt *runtime.Runtime, gate *mcpserver.Gate) (*serve.Tools, error) {
		d, err := dev.New(dev.Options{
			Patterns: patterns,
			Runtime:  rt,
			Status:   e.stderr,
			Host:     host.Options{Stderr: e.stderr, Logger: logger(e)},
			Upstream: upstream.Options{Stderr: e.stderr, Logger: logger(e), Insecure: sf.insecure, MaxMessageBytes: 2 * rt.Options().MaxResultBytes},
			Poll:     *poll,
			Grace:    sf.grace,
			Logger:   logger(e),
			// Until a load succeeds, the gate answers the requests for
			// tools with why the last one failed.
			Loaded: gate.Open,
		})
		if err != nil {
			return nil, usageErr(err)
		}
		return &serve.Tools{
			// Contracts or handlers that do not build are told to the
			// clients (Loaded) until a reload succeeds; a first load
			// that cannot start (patterns that name no contract) is a
			// usage error.
			Load: func(ctx context.Context) error {
				if err := d.Start(ctx); err != nil {
					return usageErr(err)
				}
				return nil
			},
			OpensGate: true,
			// An edit may bring prompts, resources or skills to a session
			// that initialized without them.
			Declared: mcpserver.Features{Prompts: true, Resources: true, Completions: true, Skills: true},
			// The daemon stops its own handlers when Run ends.
			Follow: func(ctx context.Context) error {
				err := d.Run(ctx)
				if err != nil {
					fmt.Fprintf(e.stderr, "toolc dev: %v\n", err)
				}
				return err
			},
		}, nil
	})
}
