package bundle_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/toolc/toolc/bundle"
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/testmodule"
)

// svcCatalog is the catalog of dev/testdata/project.txtar's service,
// written by hand: these tests need no CUE.
func svcCatalog() *catalog.Catalog {
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "svc", Version: "1.0.0", Description: "A service", Dir: "api", Handler: "../handler",
		Tools: []*catalog.Tool{{Name: "echo", Description: "Echo a message back", Request: catalog.Message{Fields: []*catalog.Field{
			{Name: "message", Type: catalog.String, Description: "Text to send back", Required: true},
		}}}}}}}
	cat.Seal()
	return cat
}

func project(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return testmodule.FromTxtar(t, root, filepath.Join(root, "dev", "testdata", "project.txtar"))
}

// files reads every file under dir, by slash path.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d files, then %d", what, len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s: %s differs", what, name)
		}
	}
}

// TestWriteReproducible writes a bundle, writes it again over itself, and
// writes one from a copy of the sources in another directory: the bytes
// are the same, so that a bundle can be rebuilt and checked by anyone.
func TestWriteReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a handler")
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "dist", "bundle")
	write := func(base string) map[string][]byte {
		t.Helper()
		w, err := bundle.Write(ctx, svcCatalog(), bundle.Options{Dir: out, Base: base, Toolc: "toolc test"})
		if err != nil {
			t.Fatal(err)
		}
		if w.Manifest.Platform() != goruntime.GOOS+"/"+goruntime.GOARCH {
			t.Errorf("manifest platform %s", w.Manifest.Platform())
		}
		return files(t, out)
	}
	first := write(project(t))
	for _, name := range []string{bundle.ManifestFile, bundle.CatalogFile, bundle.SumsFile, "handlers/svc"} {
		if first[name] == nil {
			t.Errorf("the bundle has no %s; it has %v", name, keys(first))
		}
	}
	sameFiles(t, "written again", first, write(project(t)))
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("beside the bundle: %v, want the bundle alone (no temporary directories)", entries)
	}

	b, err := bundle.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Binaries) != 1 || b.Binaries[0].Service != "svc" || b.Manifest.Toolc != "toolc test" {
		t.Errorf("loaded %+v %+v", b.Manifest, b.Binaries)
	}
	if fi, err := os.Stat(b.Binaries[0].Path); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("handler %s: %v %v, want an executable", b.Binaries[0].Path, fi, err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWriteFailsWhole: a handler that does not build leaves no bundle
// directory, and leaves an existing bundle as it was; a directory that
// holds something else is refused before anything is built.
func TestWriteFailsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a handler")
	}
	ctx := context.Background()
	dir := project(t)
	parent := t.TempDir()
	out := filepath.Join(parent, "bundle")
	main := filepath.Join(dir, "handler", "main.go")
	good, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, []byte("package main\n\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = bundle.Write(ctx, svcCatalog(), bundle.Options{Dir: out, Base: dir})
	var be *host.BuildError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("Write with a broken handler: %v, want the build error", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a failed Write left %v", entries)
	}

	if err := os.WriteFile(main, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Write(ctx, svcCatalog(), bundle.Options{Dir: out, Base: dir}); err != nil {
		t.Fatal(err)
	}
	before := files(t, out)
	if err := os.WriteFile(main, []byte("package main\n\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Write(ctx, svcCatalog(), bundle.Options{Dir: out, Base: dir}); err == nil {
		t.Fatal("Write with a broken handler succeeded")
	}
	sameFiles(t, "after a failed Write over it", before, files(t, out))
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("a failed Write left %v beside the bundle", entries)
	}

	other := filepath.Join(parent, "src")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Write(ctx, svcCatalog(), bundle.Options{Dir: other, Base: dir}); err == nil || !strings.Contains(err.Error(), "holds no toolc bundle: not replacing it") {
		t.Errorf("Write over a source directory: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(other, "main.go")); err != nil {
		t.Errorf("Write over a source directory removed it: %v", err)
	}
}

// fakeBundle writes a bundle by hand, with a handler that is no program
// (Load never runs it), and returns its directory.
func fakeBundle(t *testing.T, edit func(dir string, manifest map[string]string)) string {
	t.Helper()
	dir := t.TempDir()
	cat, err := svcCatalog().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	manifest := map[string]string{
		"goos": goruntime.GOOS, "goarch": goruntime.GOARCH, "format": bundle.Format,
		"catalog": "catalog.json", "handler": "handlers/svc", "name": "svc",
	}
	if err := os.Mkdir(filepath.Join(dir, "handlers"), 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, dir, "catalog.json", cat)
	put(t, dir, "handlers/svc", []byte("#!/bin/false\n"))
	if edit != nil {
		edit(dir, manifest)
	}
	put(t, dir, "manifest.json", []byte(`{"format":"`+manifest["format"]+`","goos":"`+manifest["goos"]+`","goarch":"`+manifest["goarch"]+
		`","toolc":"toolc test","catalog":"`+manifest["catalog"]+`","services":[{"name":"`+manifest["name"]+`","handler":"`+manifest["handler"]+`"}]}`))
	var sums bytes.Buffer
	for _, name := range []string{"catalog.json", "handlers/svc", "manifest.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		sums.WriteString(hex.EncodeToString(sum[:]) + "  " + name + "\n")
	}
	if _, err := os.Stat(filepath.Join(dir, bundle.SumsFile)); err != nil {
		put(t, dir, bundle.SumsFile, sums.Bytes())
	}
	return dir
}

func put(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestLoad holds a bundle to its sums, its platform and its layout.
func TestLoad(t *testing.T) {
	other := "linux"
	if goruntime.GOOS == "linux" {
		other = "darwin"
	}
	for _, tc := range []struct {
		name string
		// edit changes the files before the manifest and sums are
		// written; tamper, after.
		edit   func(dir string, manifest map[string]string)
		tamper func(t *testing.T, dir string)
		want   string // "" for a bundle that loads
	}{
		{name: "good"},
		{name: "handler changed after the sums", want: "handlers/svc has sha256 ",
			tamper: func(t *testing.T, dir string) { put(t, dir, "handlers/svc", []byte("#!/bin/true\n")) }},
		{name: "manifest changed after the sums", want: "manifest.json has sha256 ",
			tamper: func(t *testing.T, dir string) {
				data, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
				put(t, dir, "manifest.json", bytes.Replace(data, []byte("toolc test"), []byte("toolc evil"), 1))
			}},
		{name: "catalog changed after the sums", want: "catalog.json has sha256 ",
			tamper: func(t *testing.T, dir string) {
				data, _ := os.ReadFile(filepath.Join(dir, "catalog.json"))
				put(t, dir, "catalog.json", bytes.Replace(data, []byte("Echo a message back"), []byte("Echo a message, now"), 1))
			}},
		{name: "no sums", want: "no SHA256SUMS: not a toolc bundle",
			tamper: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "SHA256SUMS")) }},
		{name: "sums that are not sha256sum's", want: "SHA256SUMS:1: not a sha256sum line",
			edit: func(dir string, _ map[string]string) { put(t, dir, "SHA256SUMS", []byte("md5 catalog.json\n")) }},
		{name: "handler not in the sums", want: "SHA256SUMS does not list handlers/svc",
			tamper: func(t *testing.T, dir string) {
				data, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
				var kept []string
				for _, l := range strings.SplitAfter(string(data), "\n") {
					if !strings.Contains(l, "handlers/") {
						kept = append(kept, l)
					}
				}
				put(t, dir, "SHA256SUMS", []byte(strings.Join(kept, "")))
			}},
		{name: "handler outside the bundle", want: `the handler "../svc" of service "svc" is not a file in handlers/`,
			edit: func(_ string, m map[string]string) { m["handler"] = "../svc" }},
		{name: "handler for another service", want: `names no handler for service "svc"`,
			edit: func(_ string, m map[string]string) { m["name"] = "other" }},
		{name: "another platform", want: "was built for " + other + "/" + goruntime.GOARCH + ", and this toolc runs on " + goruntime.GOOS + "/" + goruntime.GOARCH +
			", where its handlers cannot run: serve it with a toolc on " + other + "/" + goruntime.GOARCH +
			", or make a bundle for this platform (toolc bundle -o DIR --goos " + goruntime.GOOS + " --goarch " + goruntime.GOARCH + ")",
			edit: func(_ string, m map[string]string) { m["goos"] = other }},
		{name: "another format", want: `format "toolc.bundle/v2" is not "toolc.bundle/v1"`,
			edit: func(_ string, m map[string]string) { m["format"] = "toolc.bundle/v2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeBundle(t, tc.edit)
			if tc.tamper != nil {
				tc.tamper(t, dir)
			}
			b, err := bundle.Load(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tc.want == "":
				if len(b.Binaries) != 1 || !filepath.IsAbs(b.Binaries[0].Path) || len(b.Binaries[0].SHA256) != sha256.Size {
					t.Errorf("binaries %+v", b.Binaries)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("Load: %v\nwant an error with %q", err, tc.want)
			}
		})
	}
}

func TestOfCatalog(t *testing.T) {
	dir := fakeBundle(t, nil)
	if got, ok := bundle.OfCatalog(filepath.Join(dir, "catalog.json")); !ok || got != dir {
		t.Errorf("OfCatalog(bundle's catalog) = %q, %v", got, ok)
	}
	plain := t.TempDir()
	put(t, plain, "catalog.json", []byte("{}"))
	if _, ok := bundle.OfCatalog(filepath.Join(plain, "catalog.json")); ok {
		t.Error("OfCatalog(a catalog with no manifest beside it) = true")
	}
	if _, ok := bundle.OfCatalog(filepath.Join(dir, "other.json")); ok {
		t.Error("OfCatalog(a file the manifest does not name) = true")
	}
}

// TestWriteOtherPlatform builds a bundle for another platform than the
// one the test runs on, of a handler that is the smallest main package
// (cross-compiling one with toolc's plugin SDK takes minutes): its
// binary is for that platform, and Load refuses it, saying so.
func TestWriteOtherPlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles a program")
	}
	target := host.Target{GOOS: "linux", GOARCH: "arm64"}
	if goruntime.GOOS == "linux" && goruntime.GOARCH == "arm64" {
		target.GOARCH = "amd64"
	}
	src := t.TempDir()
	put(t, src, "go.mod", []byte("module example.com/tiny\n\ngo 1.22\n"))
	put(t, src, "main.go", []byte("package main\n\nfunc main() {}\n"))
	cat := svcCatalog()
	cat.Services[0].Dir, cat.Services[0].Handler = ".", "."
	out := filepath.Join(t.TempDir(), "bundle")
	w, err := bundle.Write(context.Background(), cat, bundle.Options{Dir: out, Base: src, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Manifest.Platform(); got != "linux/"+target.GOARCH {
		t.Errorf("manifest platform %s", got)
	}
	f, err := elf.Open(filepath.Join(out, "handlers", "svc"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64}[target.GOARCH]
	if f.Machine != want {
		t.Errorf("the handler is for %v, want %v", f.Machine, want)
	}
	var pe *bundle.PlatformError
	if _, err := bundle.Load(out); !errors.As(err, &pe) || pe.Built != "linux/"+target.GOARCH {
		t.Errorf("Load of a bundle for linux/%s: %v, want a PlatformError", target.GOARCH, err)
	}
}
