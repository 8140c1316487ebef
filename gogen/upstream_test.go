package gogen_test

import (
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/gogen"
)

// TestCatalogSkipsUpstreams: a service that an upstream MCP server serves
// has no Go side, so gen go writes nothing into its contract directory.
func TestCatalogSkipsUpstreams(t *testing.T) {
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "docs", Version: "1.0.0", Description: "Docs", Dir: "docs", Handler: ".",
		Upstream: &catalog.Upstream{Command: []string{"docs-mcp"}},
		Tools:    []*catalog.Tool{{Name: "search", Description: "Search", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}}}
	files, err := gogen.Catalog(cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Errorf("gen go writes %s for a service with an upstream", f.Path)
	}
}
