package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
)

// The README's rule table and its contract example are derived from the
// code; these tests fail when the two drift apart.
func TestREADMERules(t *testing.T) {
	readme := readFile(t, "../../README.md")
	_, rest, ok := strings.Cut(readme, "<!-- rules:begin -->\n")
	table, _, ok2 := strings.Cut(rest, "<!-- rules:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no rules:begin/rules:end block")
	}
	if want := compiler.RulesMarkdown(); table != want {
		t.Errorf("README.md rule table is stale; replace it with the output of `toolc rules --format markdown`:\n%s", want)
	}
}

func TestREADMEExample(t *testing.T) {
	readme := readFile(t, "../../README.md")
	example := readFile(t, "../../examples/weather/weather.cue")
	if !strings.Contains(readme, "```cue\n"+example+"```") {
		t.Error("README.md does not quote examples/weather/weather.cue as it is")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestREADMEHandler builds the README's handler example against this
// checkout, so the example a reader copies compiles.
func TestREADMEHandler(t *testing.T) {
	readme := readFile(t, "../../README.md")
	_, after, ok := strings.Cut(readme, "## Handlers")
	_, code, ok2 := strings.Cut(after, "```go\n")
	code, _, ok3 := strings.Cut(code, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no Go block under ## Handlers")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum := readFile(t, filepath.Join(root, "go.sum"))
	dir := writeFiles(t, map[string]string{
		"main.go": code,
		"go.mod":  "module example.com/readme\n\ngo 1.25\n\nrequire github.com/toolc/toolc v0.0.0\n\nreplace github.com/toolc/toolc => " + root + "\n",
		"go.sum":  sum,
	})
	build := exec.Command("go", "vet", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("the README's handler does not build: %v\n%s", err, out)
	}
}
