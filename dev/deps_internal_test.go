package dev

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/testmodule"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listDeps names the local packages a handler imports from outside its
// tree: of its module and of a module replaced by a directory outside it,
// with the directories of their embedded files, and a package imported
// but missing by the directory it would have; never the handler's own
// packages nor the standard library's. Symlink cycles in and around them
// neither hang the listing nor the hashing.
func TestListDeps(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"proj/go.mod": "module example.com/proj\n\ngo 1.26\n\nrequire example.com/ext v0.0.0\n\nreplace example.com/ext => ../ext\n",
		"proj/plugin/main.go": `package main

import (
	"fmt"

	"example.com/proj/lib"
	"example.com/proj/plugin/inner"
)

func main() { fmt.Println(lib.Greeting(), inner.X) }
`,
		"proj/plugin/inner/inner.go": "package inner\n\nconst X = 1\n",
		"proj/lib/lib.go": `package lib

import (
	_ "embed"

	"example.com/ext"
	"example.com/proj/missing"
)

//go:embed static/hello.txt
var hello string

func Greeting() string { return hello + ext.Mark + missing.Y }
`,
		"proj/lib/lib_test.go":      "package lib\n",
		"proj/lib/static/hello.txt": "hello",
		"proj/unused/unused.go":     "package unused\n",
		"ext/go.mod":                "module example.com/ext\n\ngo 1.26\n",
		"ext/mark.go":               "package ext\n\nconst Mark = \"!\"\n",
	})
	proj := filepath.Join(dir, "proj")
	// A link to the package's own directory, and a cycle of two links.
	for link, to := range map[string]string{"lib/self": ".", "lib/a": "b", "lib/b": "a", "cycle": "cycle2", "cycle2": "cycle"} {
		if err := os.Symlink(to, filepath.Join(proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	deps, err := listDeps(context.Background(), filepath.Join(proj, "plugin"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs, mods []string
	for _, d := range deps.dirs {
		r, _ := filepath.Rel(dir, d)
		dirs = append(dirs, filepath.ToSlash(r))
	}
	for _, f := range deps.modFiles {
		r, _ := filepath.Rel(dir, f)
		mods = append(mods, filepath.ToSlash(r))
	}
	if want := []string{"ext", "proj/lib", "proj/lib/static", "proj/missing"}; !slices.Equal(dirs, want) {
		t.Errorf("dirs = %v, want %v", dirs, want)
	}
	if want := []string{"ext/go.mod", "proj/go.mod"}; !slices.Equal(mods, want) {
		t.Errorf("modFiles = %v, want %v", mods, want)
	}
	for path, want := range map[string]bool{
		"proj/lib/lib.go": true, "proj/lib/static/hello.txt": true, "ext/go.mod": true, "ext/mark.go": true,
		"proj/missing/y.go": true, "proj/unused/unused.go": false, "proj/lib/static/sub/x.txt": false, "proj/plugin/main.go": false,
	} {
		if got := deps.has(filepath.Join(dir, filepath.FromSlash(path))); got != want {
			t.Errorf("has(%s) = %v, want %v", path, got, want)
		}
	}

	lib, _ := hashPart("dir:" + filepath.Join(proj, "lib"))
	if lib == "" || lib == absent {
		t.Errorf("the library's hash = %q", lib)
	}
	writeTree(t, proj, map[string]string{"lib/lib_test.go": "package lib\n\n// changed\n"})
	if again, _ := hashPart("dir:" + filepath.Join(proj, "lib")); again != lib {
		t.Errorf("a test file changed the library's hash")
	}
	if h, _ := hashPart("dir:" + filepath.Join(proj, "missing")); h != absent {
		t.Errorf("a missing package hashes as %q, want %q", h, absent)
	}
	if h, _ := hashPart("dir:" + filepath.Join(proj, "cycle")); h != "" {
		t.Errorf("a directory that is a symlink cycle hashes as %q, want \"\" (unknown)", h)
	}

	// A go.mod that does not parse fails the listing, with go's reason.
	writeTree(t, dir, map[string]string{"proj/go.mod": "module example.com/proj\n\ngo 1.26\nrequire (\n"})
	if _, err := listDeps(context.Background(), filepath.Join(proj, "plugin")); err == nil || !strings.HasPrefix(err.Error(), "go list: ") || !strings.Contains(err.Error(), "go.mod") {
		t.Errorf("listing with a broken go.mod: %v", err)
	}
}

// BenchmarkListDeps measures the go list that follows each handler build,
// on the handler of dev/testdata/project.txtar, interleaved with a go
// build of an edit of the same handler, as toolc dev runs them (the
// machine may be loaded by others; interleaving keeps the two under the
// same load). It reports the medians and their ratio.
func BenchmarkListDeps(b *testing.B) {
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	dir := testmodule.FromTxtar(b, root, filepath.Join("testdata", "project.txtar"))
	handler := filepath.Join(dir, "handler")
	src, err := os.ReadFile(filepath.Join(handler, "main.go"))
	if err != nil {
		b.Fatal(err)
	}
	var list, build []time.Duration
	run := time.Now().UnixNano()
	for i := range b.N {
		edited := strings.Replace(string(src), `const version = "v1"`, fmt.Sprintf(`const version = "b%d-%d"`, run, i), 1)
		if err := os.WriteFile(filepath.Join(handler, "main.go"), []byte(edited), 0o644); err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		cmd := exec.Command("go", "build", "-o", filepath.Join(b.TempDir(), "bin"), ".")
		cmd.Dir = handler
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		build = append(build, time.Since(t))
		t = time.Now()
		if _, err := listDeps(context.Background(), handler); err != nil {
			b.Fatal(err)
		}
		list = append(list, time.Since(t))
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	ml, mb := median(list), median(build)
	b.ReportMetric(float64(ml.Microseconds())/1000, "ms-list")
	b.ReportMetric(float64(mb.Microseconds())/1000, "ms-build")
	b.ReportMetric(float64(ml)/float64(mb), "list/build")
}
