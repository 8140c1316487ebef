package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

// newLibProject writes testdata/devlib.txtar into a temporary directory
// and returns the project's directory; the module that it replaces lies
// beside it.
func newLibProject(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "devlib.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		writeDevFile(t, filepath.Join(dir, f.Name), strings.ReplaceAll(string(f.Data), "@ROOT@", root))
	}
	proj := filepath.Join(dir, "proj")
	writeDevFile(t, filepath.Join(proj, "go.sum"), readDevFile(t, filepath.Join(root, "go.sum")))
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = proj
	tidy.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return proj
}

// TestDevLocalPackages runs toolc dev on a project whose handler imports
// a library package of the project from a sibling directory, which
// imports a package of a module outside the project (replace
// ../extlib). An edit of either library rebuilds that handler, and not
// the other service's, and the next call answers with the new code; a
// save that changes no build input rebuilds nothing; once the handler no
// longer imports the library, an edit of it rebuilds nothing.
func TestDevLocalPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	dir := newLibProject(t)
	lib := filepath.Join(dir, "greeting", "greeting.go")
	ext := filepath.Join(dir, "..", "extlib", "mark.go")
	s := startDev(t, dir)
	s.handler = filepath.Join(dir, "plugin", "main.go")
	hello := func(want string) {
		t.Helper()
		if got, ok := v1Call(t, s, "hello", `{"name":"Ann"}`); !ok || got != want {
			t.Errorf("/v1/call hello = %s, %v; want %s", got, ok, want)
		}
	}
	hello("Hello, Ann!")
	rebuiltGreet := `reloaded in \S+: tools unchanged; handlers of greet rebuilt; build \S+ \(greet\), start \S+, swap \S+\n`

	// The library in the project.
	src := readDevFile(t, lib)
	s.write(lib, mustReplace(t, src, `"Hello, "`, `"Hi, "`))
	if out := s.expect(rebuiltGreet); strings.Contains(out, "other") {
		t.Errorf("an edit of greet's library rebuilt the other handler:\n%s", out)
	}
	hello("Hi, Ann!")

	// The module outside the project.
	s.write(ext, mustReplace(t, readDevFile(t, ext), `Mark = "!"`, `Mark = "?"`))
	if out := s.expect(rebuiltGreet); strings.Contains(out, "other") {
		t.Errorf("an edit of the replaced module rebuilt the other handler:\n%s", out)
	}
	hello("Hi, Ann?")

	// A touch changes nothing, and a test file is no build input.
	s.step()
	now := time.Now()
	if err := os.Chtimes(lib, now, now); err != nil {
		t.Fatal(err)
	}
	writeDevFile(t, filepath.Join(dir, "greeting", "greeting_test.go"), "package greeting\n")
	if out := s.expect(`the handler of greet is unchanged: the build inputs are those of the running build; nothing rebuilt\n`); regexp.MustCompile(`build \S+ \(`).MatchString(out) {
		t.Errorf("a test file of the library rebuilt a handler:\n%s", out)
	}

	// The handler drops the import: the library is no input any more, an
	// edit of it rebuilds nothing, and an edit of the other service's
	// handler rebuilds that one alone.
	handler := readDevFile(t, s.handler)
	handler = mustReplace(t, handler, "\t\"example.com/libtest/greeting\"\n", "")
	s.write(s.handler, mustReplace(t, handler, "greeting.For(r.Name)", `"Bye, " + r.Name`))
	s.expect(rebuiltGreet)
	hello("Bye, Ann")
	s.write(lib, src)
	time.Sleep(500 * time.Millisecond) // 10 debounces: the edit's batch has come
	other := filepath.Join(dir, "other", "main.go")
	writeDevFile(t, other, mustReplace(t, readDevFile(t, other), `answer = "pong"`, `answer = "PONG"`))
	if out := s.expect(`reloaded in \S+: tools unchanged; handlers of other rebuilt; build \S+ \(other\)`); strings.Contains(out, "greet") {
		t.Errorf("an edit of a library that no handler imports any more, then of the other handler:\n%s", out)
	}
	if got, ok := v1Call(t, s, "ping", `{}`); !ok || got != "PONG" {
		t.Errorf("/v1/call ping = %s, %v; want PONG", got, ok)
	}
	hello("Bye, Ann")
}
