package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolc/toolc/httpapi"
)

// runHealth asks a toolc server whether it serves: the health check of a
// container whose image has toolc and nothing else (no shell, no curl).
// It exits 0 for a server that says "ok", and 1 otherwise, as a
// container engine's health check wants.
func runHealth(e env, args []string) error {
	fs := newFlags(e, "health")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on each try")
	wait := fs.Duration("wait", 0, "ask again until the server says ok or this long has passed (0: ask once)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	url := httpapi.DefaultHealthURL
	switch len(rest) {
	case 0:
	case 1:
		url = rest[0]
	default:
		return usageLineErr(fs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait+*timeout)
	defer cancel()
	body, err := httpapi.CheckHealth(ctx, url, *wait)
	if err != nil {
		return failf("%w", err)
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", body)
	return err
}
