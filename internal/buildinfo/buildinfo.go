// Package buildinfo says which toolc this is, from the build information
// that the go command records in the binary: the module version, the VCS
// revision and the Go version.
package buildinfo

import "runtime/debug"

// String is "toolc VERSION (REVISION) GOVERSION": what toolc version
// prints. The revision is cut to 12 characters, with "+dirty" when the
// checkout had changes; it is left out when the build has none.
func String() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "toolc (unknown version)"
	}
	out := "toolc " + orDevel(info.Main.Version)
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		rev = rev[:min(12, len(rev))]
		if dirty {
			rev += "+dirty"
		}
		out += " (" + rev + ")"
	}
	return out + " " + info.GoVersion
}

// Version is the bare module version, such as v0.1.0 or (devel), that
// the MCP server reports to clients.
func Version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return orDevel(info.Main.Version)
	}
	return "(devel)"
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}
