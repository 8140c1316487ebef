package bundle_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/bundle"
	"github.com/toolc/toolc/catalog"
)

// TestWriteRefusesUpstreams: a bundle carries Go handlers built for a
// platform; an upstream's command and files are its machine's, so a
// catalog with one is refused with a message that says so.
func TestWriteRefusesUpstreams(t *testing.T) {
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "docs", Pos: catalog.Pos{File: "docs/docs.cue", Line: 5, Column: 1}, Version: "1.0.0", Description: "Docs", Dir: "docs", Handler: ".",
		Upstream: &catalog.Upstream{Command: []string{"docs-mcp"}},
		Tools:    []*catalog.Tool{{Name: "search", Description: "Search", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}}}
	out := filepath.Join(t.TempDir(), "dist")
	_, err := bundle.Write(context.Background(), cat, bundle.Options{Dir: out})
	var ue *bundle.UpstreamError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), `docs/docs.cue:5:1: service "docs" is served by an upstream MCP server (its command docs-mcp), which a bundle cannot carry`) {
		t.Errorf("Write = %v, want the upstream refused at its position", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("Write made %s for a catalog it refused: %v", out, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("Write left %d entries beside %s", len(entries), out)
	}
}
