//go:build unix

package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourceFIFO: a resource's file replaced by a FIFO while serving
// is an error, not a resources/read that blocks for ever.
func TestResourceFIFO(t *testing.T) {
	url, dir, _, _ := serveDocs(t)
	readme := filepath.Join(dir, "docs", "README.md")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(readme, 0o644); err != nil {
		t.Fatal(err)
	}
	s := connect(t, url, "2025-11-25", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a hang, not a measure
	defer cancel()
	r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://readme"})
	if err == nil || !strings.Contains(err.Error(), "is a FIFO, not a regular file") {
		t.Fatalf("read of a FIFO = %+v, %v; want an error that says so", r, err)
	}
}
