package main

import (
	"fmt"
	"path/filepath"

	"github.com/toolc/toolc/scaffold"
)

func runInit(e env, args []string) int {
	fs := newFlags(e, "init")
	rest, status, ok := parseFlags(fs, args)
	if !ok {
		return status
	}
	if len(rest) != 1 {
		fmt.Fprintln(e.stderr, "usage: toolc init DIR")
		return exitUsage
	}
	dir := rest[0]
	files, err := scaffold.Init(dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc init: %v\n", err)
		return exitUsage
	}
	for _, f := range files {
		fmt.Fprintf(e.stdout, "created %s\n", filepath.Join(dir, f))
	}
	fmt.Fprintf(e.stdout, "\nNext:\n\tcd %s\n\tgo mod tidy        # fetches the handler SDK, github.com/toolc/toolc\n\ttoolc check ./...\n\ttoolc dev ./...    # serves MCP on http://%s/mcp and reloads as you edit\n", dir, defaultHTTPAddr)
	return exitOK
}
