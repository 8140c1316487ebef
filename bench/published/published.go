// Package published holds the tool definitions of published MCP servers,
// as their tools/list answered, for tests that measure toolc's rules and
// contract language against real tools rather than made-up ones.
//
//	servers, err := published.Load()
//	for _, s := range servers { ... s.Package, s.Version, s.Tools ... }
//
// Each servers/*.json file is one npm package: {"package", "version",
// "tools"}, where tools is the tools array of its tools/list result,
// unchanged. The definitions were collected by installing each package
// with npm (--ignore-scripts), starting it over stdio with placeholder
// credentials, and asking tools/list; see README.md in this directory.
package published

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed servers/*.json
var files embed.FS

// Server is one published MCP server's tools.
type Server struct {
	// Package and Version name the npm package the tools came from.
	Package string `json:"package"`
	Version string `json:"version"`
	Tools   []Tool `json:"tools"`
}

// Tool is one entry of a tools/list result.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Rest holds the tool's other keys (annotations, outputSchema, _meta).
	Rest map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the keys that Tool does not name in Rest.
func (t *Tool) UnmarshalJSON(data []byte) error {
	type plain Tool
	if err := json.Unmarshal(data, (*plain)(t)); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &t.Rest); err != nil {
		return err
	}
	for _, k := range []string{"name", "title", "description", "inputSchema"} {
		delete(t.Rest, k)
	}
	return nil
}

// Load returns every server of the corpus, sorted by package name.
func Load() ([]Server, error) {
	names, err := fs.Glob(files, "servers/*.json")
	if err != nil {
		return nil, err
	}
	var out []Server
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var s Server
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", path.Base(name), err)
		}
		if s.Package == "" || s.Version == "" || len(s.Tools) == 0 {
			return nil, fmt.Errorf("%s: want a package, a version and tools", path.Base(name))
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Package, b.Package) })
	return out, nil
}
