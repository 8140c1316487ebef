package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRebase moves the services' directories from the working directory
// to a catalog file's and back, as toolc build and toolc diff do.
func TestRebase(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.ToSlash(filepath.Join(t.TempDir(), "elsewhere"))
	c := &Catalog{Services: []*Service{{Dir: "examples/weather"}, {Dir: "."}, {Dir: abs}}}
	if err := c.Rebase(".", "dist/out"); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(wd, "dist/out"), abs)
	want := []string{"../../examples/weather", "../..", filepath.ToSlash(rel)}
	for i, s := range c.Services {
		if s.Dir != want[i] {
			t.Errorf("from . to dist/out: service %d: Dir %q, want %q", i, s.Dir, want[i])
		}
	}
	if err := c.Rebase("dist/out", "."); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"examples/weather", ".", abs} {
		if got := c.Services[i].Dir; got != want && filepath.Join(wd, got) != filepath.FromSlash(want) {
			t.Errorf("back from dist/out to .: service %d: Dir %q, want %q", i, got, want)
		}
	}
}
