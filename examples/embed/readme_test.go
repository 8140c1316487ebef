package main

import (
	"os"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/doctext"
)

// TestREADMEQuotesTheService keeps the README's embedding walk-through
// identical to the code it walks through.
func TestREADMEQuotesTheService(t *testing.T) {
	section := doctext.Read(t).MustSection(t, "Embedding: a service that runs its own tools")
	for _, name := range []string{"main.go", "notes/notes.go"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(section, "```go\n"+string(src)+"```") {
			t.Errorf("README.md's Embedding section does not quote examples/embed/%s as it is", name)
		}
	}
}
