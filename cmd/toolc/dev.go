//go:build !serveonly

package main

import (
	"context"

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
			Upstream: upstream.Options{Stderr: e.stderr, Logger: logger(e), Insecure: sf.insecure},
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
		// A first load that cannot start (patterns that name no
		// contract) is a usage error, exit status 2.
		t := d.Tools()
		return &t, nil
	})
}
