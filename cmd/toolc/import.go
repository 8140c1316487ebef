//go:build !serveonly

package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/toolc/toolc/internal/cliflag"
	"github.com/toolc/toolc/mcpimport"
)

// runImport writes a contract package for an existing MCP server: toolc
// import mcp [--out DIR] (-- COMMAND [ARG...] | --url URL).
func runImport(e env, args []string) error {
	fs := newFlags(e, "import")
	out := fs.String("out", ".", "write the contract package into `DIR`")
	url := fs.String("url", "", "import the Streamable HTTP server at `URL`")
	name := fs.String("name", "", "the service's `NAME` (default: the directory's name)")
	force := fs.Bool("force", false, "write over an earlier import that the server no longer matches")
	insecure := fs.Bool("insecure", false, "allow a --url that is plain http beyond loopback")
	var envNames cliflag.Strings
	fs.Var(&envNames, "env", "a variable of toolc's environment that the command needs, by `NAME` (repeat for more); the contract names it, never its value")
	// The server's command follows "--", and may have flags of its own.
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] != "mcp" || (len(command) == 0) == (*url == "") {
		return usageLineErr(fs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := mcpimport.Run(ctx, mcpimport.Options{Out: *out, Command: command, URL: *url, Env: envNames,
		Name: *name, Force: *force, Insecure: *insecure, Stderr: e.stderr})
	if rep != nil {
		rep.Print(e.stdout)
	}
	switch {
	case errors.Is(err, mcpimport.ErrDiffers):
		return failf("%w", err)
	case err != nil:
		return usageErr(err)
	}
	return nil
}
