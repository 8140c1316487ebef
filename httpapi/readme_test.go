package httpapi_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMECallerHandler keeps the README's plugins.CallerOf example the
// handler that TestCallerAcrossPlugin builds and calls.
func TestREADMECallerHandler(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n### Who is calling: `plugins.CallerOf`\n")
	section, _, _ = strings.Cut(section, "\n## ")
	src, err := os.ReadFile("../runtime/testdata/guarded/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(section, "```go\n"+string(src)+"```") {
		t.Error("README.md's Who is calling section does not quote runtime/testdata/guarded/main.go as it is")
	}
}
