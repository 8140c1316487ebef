package gogen_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/gogen"
)

// TestCatalog generates every service's files, refuses two services that
// would write one file (at the second one's position, each problem of
// every service listed), and then finds the files stale until Update
// writes them, and writes nothing that has not changed.
func TestCatalog(t *testing.T) {
	t.Chdir(t.TempDir())
	other := service(tool("get_thing", 3))
	other.Name, other.Dir, other.Pos = "other", "other", catalog.Pos{File: "other/other.cue", Line: 1, Column: 1}
	clash := service(tool("9lives", 3))
	clash.Name, clash.Pos = "clash", catalog.Pos{File: "svc/clash.cue", Line: 1, Column: 1}
	bad := service(tool("9lives", 3))
	bad.Dir = "bad"

	_, err := gogen.Catalog(&catalog.Catalog{Services: []*catalog.Service{service(tool("ping", 3)), other, clash, bad}})
	var errs diag.List
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("Catalog = %v, want a diag.List of two problems", err)
	}
	if got, want := errs[0].Pos.String()+": "+errs[0].Message, "svc/clash.cue:1:1: services svc and clash have one handler directory, so both would generate "+filepath.Join("svc", gogen.FileName); got != want {
		t.Errorf("the clash:\n got %s\nwant %s", got, want)
	}
	if errs[1].Pos.Line != 3 {
		t.Errorf("the bad name is not at its tool: %v", errs[1])
	}

	files, err := gogen.Catalog(&catalog.Catalog{Services: []*catalog.Service{other, service(tool("ping", 3))}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join("other", gogen.FileName), filepath.Join("other", gogen.TestFileName),
		filepath.Join("svc", gogen.FileName), filepath.Join("svc", gogen.TestFileName),
	}
	var got, missing []string
	for i, f := range files {
		got = append(got, f.Path)
		missing = append(missing, want[i]+" (missing)")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Catalog wrote %q, want %q, sorted", got, want)
	}
	if stale, err := gogen.Stale(files); err != nil || !slices.Equal(stale, missing) {
		t.Errorf("Stale before writing = %q, %v", stale, err)
	}
	if written, err := gogen.Update(files); err != nil || !slices.Equal(written, want) {
		t.Errorf("Update = %q, %v; want %q", written, err, want)
	}
	if stale, err := gogen.Stale(files); err != nil || len(stale) > 0 {
		t.Errorf("Stale after writing = %q, %v", stale, err)
	}
	if err := os.WriteFile(want[0], []byte("package other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if stale, err := gogen.Stale(files); err != nil || !slices.Equal(stale, []string{want[0] + " (out of date)"}) {
		t.Errorf("Stale after an edit = %q, %v", stale, err)
	}
	if written, err := gogen.Update(files); err != nil || !slices.Equal(written, want[:1]) {
		t.Errorf("Update after an edit = %q, %v; want only %s", written, err, want[0])
	}
}
