package dev_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// importLib makes the project's handler answer echo with the prefix of
// package lib, a sibling of the handler that the pattern ./api does not
// cover.
func importLib(t *testing.T, h *harness) string {
	src := replace(t, readFile(t, h.handler), "\t\"github.com/toolc/toolc/plugins\"\n", "\t\"example.com/devtest/lib\"\n\t\"github.com/toolc/toolc/plugins\"\n")
	return replace(t, src, echoBody, `plugins.Text(lib.Prefix + ":" + r.Message + r.Suffix)`)
}

func libSource(prefix string) string {
	return "package lib\n\nconst Prefix = \"" + prefix + "\"\n"
}

var builds = regexp.MustCompile(`build \S+ \(svc\)`)

// TestLocalPackage follows a local package that the handler imports from
// outside its directory, and outside the watched patterns, through the
// edits that change the set: the import added with the new package, in
// one save, builds once; an edit of the package rebuilds; the package
// renamed away fails the build, and renamed back is the running build
// again; deleted and made again with new code, it rebuilds.
func TestLocalPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	h := start(t, newProject(t), "./api")
	hi := map[string]string{"message": "hi"}
	libDir := filepath.Join(h.dir, "lib")
	lib := filepath.Join(libDir, "lib.go")

	// The import and the package, saved together.
	h.step()
	writeFile(t, lib, libSource("L1"))
	writeFile(t, h.handler, importLib(t, h))
	h.expect(`reloaded in \S+: tools unchanged; handlers of svc rebuilt; build`)
	h.settle("L1", func() bool { return h.call("echo", hi) == "L1:hi" })
	if n := len(builds.FindAllString(h.status.String()[h.mark:], -1)); n != 1 {
		t.Errorf("%d builds for one save of a new package and its import, want 1:\n%s", n, h.status.String()[h.mark:])
	}

	h.write(lib, libSource("L2"))
	h.expect(`reloaded in \S+: tools unchanged; handlers of svc rebuilt; build`)
	h.wantCall("echo", hi, "L2:hi")

	h.step()
	if err := os.Rename(libDir, libDir+"2"); err != nil {
		t.Fatal(err)
	}
	h.expect(`(?s)package example.com/devtest/lib.*reload failed .*still serving the last good state\n`)
	h.wantCall("echo", hi, "L2:hi")
	h.step()
	if err := os.Rename(libDir+"2", libDir); err != nil {
		t.Fatal(err)
	}
	h.expect(`the handler of svc is unchanged: the build inputs are those of the running build; nothing rebuilt\n`)

	h.step()
	if err := os.RemoveAll(libDir); err != nil {
		t.Fatal(err)
	}
	h.expect(`still serving the last good state\n`)
	h.write(lib, libSource("L3"))
	h.expect(`reloaded in \S+: tools unchanged; handlers of svc rebuilt; build`)
	h.wantCall("echo", hi, "L3:hi")
}

// TestListFails: when go list fails, toolc dev says so once, and rebuilds
// the handler on edits of its own directory as before.
func TestListFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	real, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	fake := "#!/bin/sh\nif [ \"$1\" = list ]; then echo 'go list: broken on purpose' >&2; exit 1; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := newProject(t) // with the real go
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := start(t, dir)
	note := "toolc dev: cannot list the packages that the handler of svc imports, so only edits of its directory rebuild it: go list: go list: broken on purpose\n"
	h.expect(regexp.QuoteMeta(note))
	h.write(h.handler, withVersion(t, readFile(t, h.handler), "v2"))
	h.expect(`reloaded in \S+: tools unchanged; handlers of svc rebuilt; build`)
	h.wantCall("echo", map[string]string{"message": "hi"}, "v2:hi")
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(h.status.String(), note); n != 1 {
		t.Errorf("the note was printed %d times, want once:\n%s", n, h.status)
	}
}
