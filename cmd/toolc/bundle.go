//go:build !serveonly

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	goruntime "runtime"
	"syscall"
	"time"

	"github.com/toolc/toolc/bundle"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/buildinfo"
	"github.com/toolc/toolc/lock"
)

// runBundle compiles the contracts and writes a bundle: the catalog, each
// service's handler built for --goos/--goarch, a manifest and their sums,
// which toolc serve --bundle serves with no go command.
func runBundle(e env, args []string) error {
	fs := newFlags(e, "bundle")
	out := fs.String("o", "", "write the bundle to the directory `DIR` (new, empty, or holding a bundle, which it replaces)")
	goos := fs.String("goos", goruntime.GOOS, "build the handlers for this operating system (`OS`, as $GOOS takes it)")
	goarch := fs.String("goarch", goruntime.GOARCH, "build the handlers for this architecture (`ARCH`, as $GOARCH takes it)")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o DIR is required: the directory to write the bundle to")
	}
	// Before anything is compiled or built: a mistaken -o costs nothing.
	if err := bundle.CheckDir(*out); err != nil {
		return usageErr(err)
	}
	l, err := lock.LoadIfExists(lock.FileName)
	if err != nil {
		return err
	}
	cat, err := compileWith(e, "bundle", compiler.Config{Lock: l}, patterns)
	if err != nil {
		return err
	}
	// A contract this command cannot carry is a contract problem: exit 1,
	// before anything is built.
	if err := bundle.CheckUpstreams(cat); err != nil {
		return failf("%w\nnothing written", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := bundle.Write(ctx, cat, bundle.Options{Dir: *out, Target: host.Target{GOOS: *goos, GOARCH: *goarch}, Toolc: buildinfo.String()})
	var be *host.BuildError
	switch {
	case errors.As(err, &be) && !errors.Is(err, host.ErrNoGo):
		return failf("%w\nnothing written", err)
	case err != nil:
		return err
	}
	fmt.Fprintf(e.stderr, "toolc bundle: wrote %s for %s: %s, %s (handlers built in %s)\n", *out, w.Manifest.Platform(),
		plural(len(cat.Services), "service"), plural(len(cat.ToolNames()), "tool"), w.Took.Round(100*time.Millisecond))
	return nil
}
