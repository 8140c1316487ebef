package httpapi_test

import (
	"os"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/doctext"
)

// TestREADMECallerHandler keeps the README's plugins.CallerOf example the
// handler that TestCallerAcrossPlugin builds and calls.
func TestREADMECallerHandler(t *testing.T) {
	section := doctext.Read(t).MustSection(t, "Who is calling: `plugins.CallerOf`")
	src, err := os.ReadFile("../runtime/testdata/guarded/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(section, "```go\n"+string(src)+"```") {
		t.Error("README.md's Who is calling section does not quote runtime/testdata/guarded/main.go as it is")
	}
}
