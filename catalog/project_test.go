package catalog_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// repoRoot is the module root, where examples/ lives, relative to this
// package's directory.
const repoRoot = ".."

// example is one compiled example contract.
type example struct {
	name string
	cat  *catalog.Catalog
}

var (
	examplesOnce sync.Once
	examplesList []example
	examplesErr  error
)

// exampleDirs lists the examples that hold contracts: every directory
// under examples/ with a .cue file.
func exampleDirs(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		// examples/embed keeps its contract in a package of its own,
		// examples/embed/notes.
		cue, _ := filepath.Glob(filepath.Join(repoRoot, "examples", e.Name(), "*.cue"))
		deeper, _ := filepath.Glob(filepath.Join(repoRoot, "examples", e.Name(), "*", "*.cue"))
		if len(cue)+len(deeper) > 0 {
			names = append(names, e.Name())
		}
	}
	if !slices.Contains(names, "weather") {
		t.Fatalf("examples/weather not found among %v", names)
	}
	return names
}

// examples compiles every example once per test binary.
func examples(t testing.TB) []example {
	t.Helper()
	names := exampleDirs(t)
	examplesOnce.Do(func() {
		for _, name := range names {
			cat, err := compileDir(repoRoot, "./examples/"+name+"/...")
			if err != nil {
				examplesErr = err
				return
			}
			examplesList = append(examplesList, example{name, cat})
		}
	})
	if examplesErr != nil {
		t.Fatal(examplesErr)
	}
	return examplesList
}

type compileError struct{ msg string }

func (e *compileError) Error() string { return e.msg }

// compileDir compiles patterns in dir and fails on any error diagnostic.
func compileDir(dir string, patterns ...string) (*catalog.Catalog, error) {
	res, err := compiler.Compile(compiler.Config{Dir: dir}, patterns...)
	if err != nil {
		return nil, err
	}
	if res.HasErrors() {
		var b bytes.Buffer
		for _, d := range res.Diagnostics {
			b.WriteString(d.String() + "\n")
		}
		return nil, &compileError{"compiling " + dir + " " + patterns[0] + ":\n" + b.String()}
	}
	return res.Catalog, nil
}

// modes are the two projection modes of every golden file.
// project is target's typed projection of c, for the tests that hold
// every target to one property.
func project(c *catalog.Catalog, target catalog.Target, opts catalog.ProjectOptions) any {
	switch target {
	case catalog.OpenAIChat:
		return c.OpenAIChatTools(opts)
	case catalog.OpenAIResponses:
		return c.OpenAIResponsesTools(opts)
	case catalog.Anthropic:
		return c.AnthropicTools(opts)
	case catalog.Gemini:
		return c.GeminiTools()
	case catalog.Bedrock:
		return c.BedrockTools(opts)
	case catalog.MCP:
		return c.MCPTools()
	}
	panic("no typed projection for " + string(target))
}

var modes = []struct {
	suffix string
	opts   catalog.ProjectOptions
}{
	{"", catalog.ProjectOptions{}},
	{".strict", catalog.ProjectOptions{Strict: true}},
}

// TestGolden pins every projection of every example, strict and not, in
// testdata/golden/<example>/<target>[.strict].json. Run with -update to
// rewrite them, then read the diff: it is the change a provider sees.
func TestGolden(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range catalog.Targets() {
			for _, m := range modes {
				name := filepath.Join("testdata", "golden", ex.name, string(target)+m.suffix+".json")
				t.Run(ex.name+"/"+string(target)+m.suffix, func(t *testing.T) {
					got, err := ex.cat.ProjectJSON(target, m.opts)
					if err != nil {
						t.Fatal(err)
					}
					if !json.Valid(got) {
						t.Fatalf("ProjectJSON is not JSON:\n%s", got)
					}
					if *update {
						if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(name, got, 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(name)
					if err != nil {
						t.Fatalf("%v (run go test ./catalog -run TestGolden -update)", err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s differs from the projection (run go test ./catalog -run TestGolden -update and review the diff):\n%s", name, lineDiff(string(want), string(got)))
					}
				})
			}
		}
	}
}

// TestGoldenComplete fails on a golden file that no example and target
// produce any more, so that a removed example leaves nothing behind.
func TestGoldenComplete(t *testing.T) {
	want := map[string]bool{}
	for _, ex := range examples(t) {
		for _, target := range catalog.Targets() {
			for _, m := range modes {
				want[filepath.Join("testdata", "golden", ex.name, string(target)+m.suffix+".json")] = true
			}
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[f] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s is not the projection of any example; remove it", f)
		}
	}
}

// lineDiff shows the lines between the common head and tail of want and
// got, with a little context: enough to see what changed.
func lineDiff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	head := 0
	for head < len(w) && head < len(g) && w[head] == g[head] {
		head++
	}
	tail := 0
	for tail < len(w)-head && tail < len(g)-head && w[len(w)-1-tail] == g[len(g)-1-tail] {
		tail++
	}
	var b strings.Builder
	for _, l := range w[max(0, head-3):head] {
		b.WriteString("  " + l + "\n")
	}
	for _, l := range w[head : len(w)-tail] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range g[head : len(g)-tail] {
		b.WriteString("+ " + l + "\n")
	}
	for _, l := range w[len(w)-tail : min(len(w), len(w)-tail+3)] {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
