package main

import (
	"fmt"
	"runtime/debug"
)

func runVersion(e env, args []string) error {
	fs := newFlags(e, "version")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintln(e.stdout, versionString())
	return err
}

// versionString is "toolc VERSION (REVISION) GOVERSION", from the build
// information that the go command records.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "toolc (unknown version)"
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	out := "toolc " + version
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		out += " (" + rev + ")"
	}
	return out + " " + info.GoVersion
}

// moduleVersion is the bare version, such as v0.1.0 or (devel), that the
// MCP server reports to clients.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
