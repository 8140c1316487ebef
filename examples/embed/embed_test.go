package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
)

// generateArgs returns the directory and the toolc build patterns of the
// go:generate line in main.go, so that the test compiles exactly what go
// generate compiles.
func generateArgs(t *testing.T) (dir, out string, patterns []string) {
	t.Helper()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate go run -C ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		// DIR ./cmd/toolc build -o FILE PATTERN...
		if len(f) < 6 || f[1] != "./cmd/toolc" || f[2] != "build" || f[3] != "-o" {
			t.Fatalf("unexpected go:generate line %q", line)
		}
		return f[0], f[4], f[5:]
	}
	t.Fatal("main.go has no go:generate line")
	return "", "", nil
}

// TestEmbeddedCatalogIsCurrent compiles the contracts afresh and compares
// them with the embedded catalog: a contract changed since the last go
// generate fails the test, so a stale catalog never ships.
func TestEmbeddedCatalogIsCurrent(t *testing.T) {
	dir, out, patterns := generateArgs(t)
	if out != "examples/embed/"+catalogFile {
		t.Fatalf("go generate writes %s, not the embedded %s", out, catalogFile)
	}
	if !slices.Equal(patterns, []string{"./examples/embed/notes"}) {
		t.Errorf("go generate builds %v, not the service's own contract, ./examples/embed/notes", patterns)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if res.HasErrors() {
		t.Fatalf("the contracts have errors: %v", res.Diagnostics)
	}
	embedded, err := catalog.Load(catalogFS, catalogFile)
	if err != nil {
		t.Fatalf("stale embedded catalog: run go generate ./examples/embed (%v)", err)
	}
	if embedded.Fingerprint != res.Catalog.Fingerprint {
		var changed []string
		fresh := map[string]string{}
		for _, tool := range res.Catalog.Tools() {
			fresh[tool.Name] = tool.Fingerprint
		}
		for _, tool := range embedded.Tools() {
			if fresh[tool.Name] != tool.Fingerprint {
				changed = append(changed, tool.Name)
			}
			delete(fresh, tool.Name)
		}
		for name := range fresh {
			changed = append(changed, name)
		}
		slices.Sort(changed)
		t.Fatalf("stale embedded catalog: run go generate ./examples/embed (changed tools: %v)", changed)
	}
	if data, _ := res.Catalog.Marshal(); !bytes.Equal(data, mustRead(t, catalogFile)) {
		t.Logf("the contracts are unchanged, but declarations moved; go generate ./examples/embed updates their positions")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
