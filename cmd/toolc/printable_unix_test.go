//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/lock"
)

// hostile is what a terminal acts on rather than shows: OSC 52, which
// writes the clipboard, and ESC [ 2 J, which clears the screen. A file
// name or a contract that is someone else's may hold it; toolc prints
// U+FFFD in its place (diag.Printable) on every line.
const hostile = "\x1b]52;c;cm0gLXJm\x07\x1b[2J"

// cleaned is hostile as toolc prints it.
const cleaned = "\uFFFD]52;c;cm0gLXJm\uFFFD\uFFFD[2J"

// wantPrintable fails unless r's output holds no terminal control, and
// holds the hostile text, cleaned, where it printed it.
func wantPrintable(t *testing.T, r result, what string) {
	t.Helper()
	out := r.stdout + r.stderr
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("%s printed terminal controls:\nstdout: %q\nstderr: %q", what, r.stdout, r.stderr)
	}
	if !strings.Contains(out, cleaned) {
		t.Errorf("%s did not print the name, cleaned:\nstdout: %q\nstderr: %q", what, r.stdout, r.stderr)
	}
}

// TestErrorsPrintable: the error that stops a command (here, a FIFO among
// the contract files, whose name the message gives) is printed through the
// sanitiser, by every command that compiles contracts.
func TestErrorsPrintable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})
	if err := mkfifo(filepath.Join(dir, "shop", "x"+hostile+".cue")); err != nil {
		t.Fatal(err)
	}
	if err := (&lock.Lock{Services: []*lock.Service{}}).WriteFile(filepath.Join(dir, "empty.lock")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check"}, {"build"}, {"lock"}, {"export", "--format", "mcp"}, {"gen", "go"},
		{"diff", "--against", "empty.lock"}, {"serve"}, {"call", "find_orders"},
	} {
		r := toolc(t, dir, args...)
		wantStatus(t, r, exitUsage, strings.Join(args, " "))
		wantPrintable(t, r, strings.Join(args, " "))
	}
}

// hostileLock writes a lock whose service "notes" has a directory and a
// file name that hold terminal controls, as a lock from a pull request
// may: its fingerprint is no secret.
func hostileLock(t *testing.T, dir, name string) {
	t.Helper()
	l := lock.FromCatalog(&catalog.Catalog{Services: []*catalog.Service{{
		Name: "notes", Version: "1.0.0", Description: "Notes", Dir: "notes" + hostile, Handler: ".",
		Tools: []*catalog.Tool{{Name: "add_note", Description: "Add a note", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}}})
	if err := l.WriteFile(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// TestChangesPrintable: toolc diff's changes, in text and as GitHub
// annotations, its summary, and the changes toolc lock accepts, print the
// lock's names through the sanitiser.
func TestChangesPrintable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})
	old := "old" + hostile + ".lock"
	hostileLock(t, dir, old)
	for _, format := range []string{"text", "github"} {
		r := toolc(t, dir, "diff", "--against", old, "--format", format)
		wantStatus(t, r, exitFail, "diff --format "+format)
		wantPrintable(t, r, "diff --format "+format)
		if !strings.Contains(r.stdout, "which was in notes"+cleaned) {
			t.Errorf("diff --format %s does not name the removed service's directory:\n%s", format, r.stdout)
		}
	}
	hostileLock(t, dir, lock.FileName)
	r := toolc(t, dir, "lock")
	wantStatus(t, r, exitOK, "lock")
	wantPrintable(t, r, "lock")
	if !strings.Contains(r.stderr, "accepted: tool \"add_note\" was removed with its service \"notes\", which was in notes"+cleaned) {
		t.Errorf("lock does not say what it accepted:\n%s", r.stderr)
	}
}

// TestDiffNotesPrintable: a revision that holds a link whose name holds
// terminal controls is noted, cleaned.
func TestDiffNotesPrintable(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})
	if err := os.Symlink("../../outside.cue", filepath.Join(repo, "shop", "x"+hostile+".cue")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "", "init", "-q")
	gitRun(t, repo, "", "add", ".")
	gitRun(t, repo, "", "commit", "-q", "-m", "a link outside, with a hostile name")
	os.Remove(filepath.Join(repo, "shop", "x"+hostile+".cue"))
	r := toolc(t, repo, "diff", "--against", "HEAD")
	wantStatus(t, r, exitOK, "diff --against HEAD")
	wantPrintable(t, r, "diff --against HEAD")
	wantMatch(t, r.stderr, `(?m)^toolc diff: note: at HEAD, shop/x`+regexp.QuoteMeta(cleaned)+`\.cue: a symbolic link`, "diff's note")
}

// TestGenGoPrintable: a handler directory named with terminal controls
// would reach the lines of gen go that name the files it writes or finds
// stale. The hidden-text rule now refuses such a handler; its error, and
// whatever else gen go prints, holds no terminal control either way.
func TestGenGoPrintable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"notes/notes.cue": strings.Replace(genContract, `version:`, `handler: "h\u001b]52;c;cm0gLXJm\u0007\u001b[2J"
	version:`, 1)})
	for _, args := range [][]string{{"gen", "go", "--check"}, {"gen", "go"}} {
		r := toolc(t, dir, args...)
		wantStatus(t, r, exitFail, strings.Join(args, " "))
		if out := r.stdout + r.stderr; strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "[hidden-text]") {
			t.Errorf("%s:\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
}
