package main

import (
	"os"
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
