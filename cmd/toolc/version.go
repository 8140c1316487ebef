package main

import (
	"fmt"

	"github.com/toolc/toolc/internal/buildinfo"
)

func runVersion(e env, args []string) error {
	fs := newFlags(e, "version")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintln(e.stdout, buildinfo.String())
	return err
}

// moduleVersion is the version that the MCP server reports to clients.
func moduleVersion() string { return buildinfo.Version() }
