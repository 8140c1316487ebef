package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// namedHandler answers with the name of its tool, so that a test sees which
// tool a call ran.
type namedHandler string

func (h namedHandler) Tool() string { return string(h) }

func (h namedHandler) Call(context.Context, json.RawMessage) (*plugins.Result, error) {
	return plugins.Text(string(h)), nil
}

// TestSwapRefusesAmbiguousNames holds a catalog that did not come through
// the compiler (a hand-edited catalog file, say) to unique-name and
// mcp-name: a name that a client can call, function name or MCP name, must
// lead to one tool, or a call meant for one tool runs another. Swap refuses
// such a catalog and keeps serving the one before.
func TestSwapRefusesAmbiguousNames(t *testing.T) {
	tool := func(name, mcpName string) *catalog.Tool {
		return &catalog.Tool{Name: name, MCPName: mcpName, Description: "A tool"}
	}
	svc := func(name string, tools ...*catalog.Tool) *catalog.Service {
		return &catalog.Service{Name: name, Version: "1.0.0", Description: "A service", Tools: tools}
	}
	for _, tc := range []struct {
		name     string
		services []*catalog.Service
		want     string // "" for a catalog that Swap takes
	}{
		{"distinct names", []*catalog.Service{svc("files", tool("delete_all", "")), svc("notes", tool("read", ""))}, ""},
		{"a tool's pinned MCP name is its own function name", []*catalog.Service{svc("files", tool("delete_all", "delete_all"))}, ""},
		{
			// Issue 20, item 3: "files_delete_all" is the MCP name of
			// files' delete_all and the function name of a tool of notes.
			"a function name is another tool's derived MCP name",
			[]*catalog.Service{svc("files", tool("delete_all", "")), svc("notes", tool("files_delete_all", ""))},
			`tool "delete_all" of service "files" (MCP name "files_delete_all") and tool "files_delete_all" of service "notes" (MCP name "notes_files_delete_all") can both be called as "files_delete_all"`,
		},
		{
			"a pinned MCP name is another tool's function name",
			[]*catalog.Service{svc("files", tool("delete_all", "")), svc("notes", tool("read", "delete_all"))},
			`tool "delete_all" of service "files" (MCP name "files_delete_all") and tool "read" of service "notes" (MCP name "delete_all") can both be called as "delete_all"`,
		},
		{
			"two pinned MCP names",
			[]*catalog.Service{svc("files", tool("delete_all", "wipe")), svc("notes", tool("read", "wipe"))},
			`can both be called as "wipe"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New(runtime.Options{})
			cat := &catalog.Catalog{Services: tc.services}
			cat.Seal()
			dispatchers := map[string]runtime.Dispatcher{}
			for _, s := range cat.Services {
				var hs []plugins.Handler
				for _, tl := range s.Tools {
					hs = append(hs, namedHandler(tl.Name))
				}
				dispatchers[s.Name] = runtime.Local(hs...)
			}
			before := rt.Snapshot()
			_, err := rt.Swap(cat, dispatchers)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Swap: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "must be unique across the catalog") {
				t.Fatalf("Swap = %v; want an error saying %s", err, tc.want)
			}
			if rt.Snapshot() != before {
				t.Error("a refused Swap replaced the snapshot")
			}
		})
	}
}
