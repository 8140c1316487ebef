package bundle_test

import (
	"context"
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
		Name: "docs", Version: "1.0.0", Description: "Docs", Dir: "docs", Handler: ".",
		Upstream: &catalog.Upstream{Command: []string{"docs-mcp"}},
		Tools:    []*catalog.Tool{{Name: "search", Description: "Search", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}}}
	_, err := bundle.Write(context.Background(), cat, bundle.Options{Dir: filepath.Join(t.TempDir(), "dist")})
	if err == nil || !strings.Contains(err.Error(), "services docs have an upstream MCP server") {
		t.Errorf("Write = %v, want the upstream refused", err)
	}
}
