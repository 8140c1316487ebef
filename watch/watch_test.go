package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func start(t *testing.T, dir string, opts Options) *Watcher {
	t.Helper()
	w, err := New([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// quiet is how long a test waits to be sure no further batch comes: many
// times the debounce.
const quiet = 400 * time.Millisecond

// batches collects the batches that arrive until the watcher has been
// quiet for a while, failing if none arrives within the deadline when
// want > 0.
func batches(t *testing.T, w *Watcher, want int) []Batch {
	t.Helper()
	var got []Batch
	deadline := time.After(5 * time.Second)
	for {
		wait := quiet
		if len(got) < want {
			wait = 5 * time.Second
		}
		select {
		case b := <-w.Batches():
			got = append(got, b)
		case <-time.After(wait):
			if len(got) != want {
				t.Fatalf("got %d batches %v, want %d", len(got), got, want)
			}
			return got
		case <-deadline:
			t.Fatalf("got %d batches %v before the deadline, want %d", len(got), got, want)
		}
	}
}

func rel(dir string, b Batch) []string {
	var out []string
	for _, p := range b.Paths {
		r, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

// Each way of saving a file must give exactly one batch naming that file,
// and a save that changes nothing must give none.
func TestSavePatterns(t *testing.T) {
	tests := []struct {
		name string
		save func(t *testing.T, dir string)
		want []string // nil: no batch at all
		// debounce, if set, replaces the default 50 ms: two writes
		// that must fall within one debounce may be further apart
		// than 50 ms in a -race run on a loaded machine (a clean-clone
		// CI run got two batches).
		debounce time.Duration
	}{
		{"write", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.cue"), "package a\nx: 2\n")
		}, []string{"a.cue"}, 0},
		{"atomic save", func(t *testing.T, dir string) {
			tmp := filepath.Join(dir, ".a.cue.swp-tmp")
			write(t, tmp, "package a\nx: 3\n")
			if err := os.Rename(tmp, filepath.Join(dir, "a.cue")); err != nil {
				t.Fatal(err)
			}
		}, []string{"a.cue"}, 0},
		{"sed -i", func(t *testing.T, dir string) {
			run(t, dir, "sed", "-i", "s/x: 1/x: 4/", "a.cue")
		}, []string{"a.cue"}, 0},
		{"touch", func(t *testing.T, dir string) {
			now := time.Now().Add(time.Hour)
			os.Chtimes(filepath.Join(dir, "a.cue"), now, now)
		}, nil, 0},
		{"chmod", func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, "a.cue"), 0o600)
		}, nil, 0},
		{"same bytes", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.cue"), "package a\nx: 1\n")
		}, nil, 0},
		{"write twice quickly", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.cue"), "package a\nx: 5\n")
			write(t, filepath.Join(dir, "a.cue"), "package a\nx: 6\n")
		}, []string{"a.cue"}, time.Second},
		{"hidden directory", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/x\n")
		}, nil, 0},
		{"editor backup", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.cue~"), "old\n")
		}, nil, 0},
		{"new directory", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sub", "deep", "b.cue"), "package b\n")
		}, []string{"sub/deep/b.cue"}, 0},
		{"remove file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a.cue"))
		}, []string{"a.cue"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "a.cue"), "package a\nx: 1\n")
			w := start(t, dir, Options{Debounce: tt.debounce})
			tt.save(t, dir)
			want := 1
			if tt.want == nil {
				want = 0
			}
			got := batches(t, w, want)
			if want == 1 && !slices.Equal(rel(dir, got[0]), tt.want) {
				t.Errorf("batch = %v, want %v", rel(dir, got[0]), tt.want)
			}
		})
	}
}

func TestNewDirectoryIsWatched(t *testing.T) {
	dir := t.TempDir()
	w := start(t, dir, Options{})
	write(t, filepath.Join(dir, "svc", "svc.cue"), "package svc\n")
	batches(t, w, 1)
	write(t, filepath.Join(dir, "svc", "svc.cue"), "package svc\nx: 1\n")
	if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"svc/svc.cue"}) {
		t.Errorf("edit in a new directory: %v", rel(dir, got[0]))
	}
}

func TestRemovedDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "svc", "a.cue"), "package svc\n")
	write(t, filepath.Join(dir, "svc", "main.go"), "package main\n")
	w := start(t, dir, Options{})
	if err := os.RemoveAll(filepath.Join(dir, "svc")); err != nil {
		t.Fatal(err)
	}
	got := batches(t, w, 1)
	if !slices.Equal(rel(dir, got[0]), []string{"svc/a.cue", "svc/main.go"}) {
		t.Errorf("removed directory: %v", rel(dir, got[0]))
	}
	// Recreated under the same name, it is watched again.
	write(t, filepath.Join(dir, "svc", "a.cue"), "package svc\n")
	batches(t, w, 1)
	write(t, filepath.Join(dir, "svc", "a.cue"), "package svc\ny: 1\n")
	batches(t, w, 1)
}

func TestGitCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "config", "user.email", "t@example.com")
	run(t, dir, "git", "config", "user.name", "t")
	for i := range 20 {
		write(t, filepath.Join(dir, "pkg", string(rune('a'+i))+".cue"), "package pkg\n")
	}
	run(t, dir, "git", "add", ".")
	run(t, dir, "git", "commit", "-qm", "one")
	run(t, dir, "git", "checkout", "-qb", "two")
	for i := range 20 {
		write(t, filepath.Join(dir, "pkg", string(rune('a'+i))+".cue"), "package pkg\nv: 2\n")
	}
	run(t, dir, "git", "commit", "-qam", "two")
	w := start(t, dir, Options{})
	run(t, dir, "git", "checkout", "-q", "-")
	got := batches(t, w, 1)
	if len(got[0].Paths) != 20 {
		t.Errorf("checkout of 20 files gave a batch of %d: %v", len(got[0].Paths), rel(dir, got[0]))
	}
}

func TestGoBuildReplacesBinary(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() { println(1) }\n")
	run(t, dir, "go", "build", "-o", "bin/app", ".")
	w := start(t, dir, Options{})
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() { println(2) }\n")
	batches(t, w, 1)
	run(t, dir, "go", "build", "-o", "bin/app", ".")
	if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"bin/app"}) {
		t.Errorf("go build -o: %v", rel(dir, got[0]))
	}
}

func TestPolling(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.cue"), "package a\n")
	w := start(t, dir, Options{Poll: 50 * time.Millisecond})
	write(t, filepath.Join(dir, "a.cue"), "package a\nx: 1\n")
	write(t, filepath.Join(dir, "sub", "b.cue"), "package b\n")
	got := batches(t, w, 1)
	if !slices.Equal(rel(dir, got[0]), []string{"a.cue", "sub/b.cue"}) {
		t.Errorf("poll: %v", rel(dir, got[0]))
	}
	now := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "a.cue"), now, now)
	batches(t, w, 0)
}

// TestRescan checks the overflow path: a rescan finds changes that no
// event announced.
func TestRescan(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.cue"), "package a\n")
	write(t, filepath.Join(dir, "gone", "c.cue"), "package c\n")
	w := start(t, dir, Options{Poll: time.Hour}) // no events, no polls
	write(t, filepath.Join(dir, "a.cue"), "package a\nx: 1\n")
	write(t, filepath.Join(dir, "new", "b.cue"), "package b\n")
	os.RemoveAll(filepath.Join(dir, "gone"))
	b := w.rescan(false)
	if !b.Rescan || !slices.Equal(rel(dir, b), []string{"a.cue", "gone/c.cue", "new/b.cue"}) {
		t.Errorf("rescan = %v %v", b.Rescan, rel(dir, b))
	}
	if b := w.rescan(false); len(b.Paths) != 0 {
		t.Errorf("a second rescan found %v", rel(dir, b))
	}
}

func TestIgnore(t *testing.T) {
	dir := t.TempDir()
	w := start(t, dir, Options{Ignore: func(path string, isDir bool) bool {
		return isDir && filepath.Base(path) == "cache"
	}})
	write(t, filepath.Join(dir, "cache", "bin"), "x")
	write(t, filepath.Join(dir, "node_modules", "m.js"), "x")
	batches(t, w, 0)
}

// TestDirectoryRenamedAwayAndBack: fsnotify drops the watches of a
// directory that moves, so one renamed away and back within a debounce
// must be watched again.
func TestDirectoryRenamedAwayAndBack(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "api", "sub", "a.cue"), "package a\n")
	w := start(t, dir, Options{})
	for range 20 {
		if err := os.Rename(filepath.Join(dir, "api"), filepath.Join(dir, "_away")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "_away"), filepath.Join(dir, "api")); err != nil {
			t.Fatal(err)
		}
	}
	batches(t, w, 0) // same files, same content
	write(t, filepath.Join(dir, "api", "sub", "a.cue"), "package a\nx: 1\n")
	if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"api/sub/a.cue"}) {
		t.Errorf("edit after the renames: %v", rel(dir, got[0]))
	}
}

// A reader busy for a while (toolc dev building a handler) then gets one
// batch holding every file saved meanwhile, not one batch per save.
func TestBatchesMergeWhileReaderIsBusy(t *testing.T) {
	dir := t.TempDir()
	w := start(t, dir, Options{Debounce: 10 * time.Millisecond})
	for i := range 10 {
		write(t, filepath.Join(dir, "main.go"), fmt.Sprintf("package main // %d\n", i))
		write(t, filepath.Join(dir, fmt.Sprintf("f%d.go", i)), "package main\n")
		time.Sleep(40 * time.Millisecond) // each save its own burst
	}
	got := batches(t, w, 1)
	if n := len(got[0].Paths); n != 11 {
		t.Errorf("merged batch has %d paths, want 11: %v", n, rel(dir, got[0]))
	}
}

// A root that is a symlink is watched where it leads, with inotify and
// with polling, and its files are reported under the link's name, for an
// edit through either name.
func TestSymlinkedRoot(t *testing.T) {
	for _, poll := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("poll=%v", poll), func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "real", "sub", "a.cue"), "package a\n")
			link := filepath.Join(dir, "link")
			if err := os.Symlink("real", link); err != nil {
				t.Fatal(err)
			}
			var asked []string
			var mu sync.Mutex
			w := start(t, link, Options{Poll: poll, Ignore: func(path string, _ bool) bool {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, path)
				return false
			}})
			for _, via := range []string{"link", "real"} {
				save(t, filepath.Join(dir, via, "sub", "a.cue"), "package a\nx: \""+via+"\"\n")
				if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"link/sub/a.cue"}) {
					t.Errorf("edit through %s: %v", via, rel(dir, got[0]))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range asked {
				if !strings.HasPrefix(p, link) {
					t.Errorf("Ignore was asked about %s, not a path under the root as given", p)
				}
			}
		})
	}
}

// A root moved away and back is watched again: its files are reported
// gone, then back, and later edits are seen.
func TestRootMovedAwayAndBack(t *testing.T) {
	for _, poll := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("poll=%v", poll), func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "proj")
			write(t, filepath.Join(dir, "api", "a.cue"), "package a\n")
			w := start(t, dir, Options{Poll: poll})
			if err := os.Rename(dir, dir+".away"); err != nil {
				t.Fatal(err)
			}
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"api/a.cue"}) {
				t.Errorf("moved away: %v", rel(dir, got[0]))
			}
			if err := os.Rename(dir+".away", dir); err != nil {
				t.Fatal(err)
			}
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"api/a.cue"}) {
				t.Errorf("moved back: %v", rel(dir, got[0]))
			}
			save(t, filepath.Join(dir, "api", "a.cue"), "package a\nx: 1\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"api/a.cue"}) {
				t.Errorf("edit after moving back: %v", rel(dir, got[0]))
			}
		})
	}
}

// save writes a file as an editor's atomic save does, so that a poll never
// sees it half written (which would be two changes, both real).
func save(t *testing.T, path, data string) {
	t.Helper()
	write(t, path+".tmp~", data)
	if err := os.Rename(path+".tmp~", path); err != nil {
		t.Fatal(err)
	}
}

// SetDirs watches single directories besides the trees, as toolc dev
// watches the local packages a handler imports: the files directly in
// each are reported, not those of a subdirectory; a save of the same bytes
// is not; a directory removed from the set is no longer watched, but one
// that is also in a tree stays watched with it; a directory named through
// a symlink is reported under that name, and a symlink loop inside one is
// not followed; a directory deleted and made again is watched again.
func TestSetDirs(t *testing.T) {
	for _, poll := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("poll=%v", poll), func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "tree", "a.cue"), "package a\n")
			write(t, filepath.Join(dir, "tree", "inner", "i.go"), "package inner\n")
			write(t, filepath.Join(dir, "lib", "lib.go"), "package lib\n")
			write(t, filepath.Join(dir, "lib", "sub", "sub.go"), "package sub\n")
			write(t, filepath.Join(dir, "real", "r.go"), "package r\n")
			if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(".", filepath.Join(dir, "lib", "loop")); err != nil {
				t.Fatal(err)
			}
			w := start(t, filepath.Join(dir, "tree"), Options{Poll: poll})
			w.SetDirs([]string{filepath.Join(dir, "lib"), filepath.Join(dir, "link"), filepath.Join(dir, "tree", "inner"), filepath.Join(dir, "gone")})
			batches(t, w, 0) // adding directories reports nothing

			save(t, filepath.Join(dir, "lib", "lib.go"), "package lib\n// 1\n")
			save(t, filepath.Join(dir, "lib", "sub", "sub.go"), "package sub\n// 1\n")
			write(t, filepath.Join(dir, "lib", "new", "n.go"), "package n\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"lib/lib.go"}) {
				t.Errorf("edits in and under a flat directory: %v", rel(dir, got[0]))
			}
			save(t, filepath.Join(dir, "lib", "lib.go"), "package lib\n// 1\n")
			batches(t, w, 0)
			save(t, filepath.Join(dir, "real", "r.go"), "package r\n// 1\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"link/r.go"}) {
				t.Errorf("an edit through a symlinked flat directory: %v", rel(dir, got[0]))
			}
			write(t, filepath.Join(dir, "gone", "g.go"), "package g\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"gone/g.go"}) {
				t.Errorf("a flat directory that appeared: %v", rel(dir, got[0]))
			}
			if err := os.RemoveAll(filepath.Join(dir, "gone")); err != nil {
				t.Fatal(err)
			}
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"gone/g.go"}) {
				t.Errorf("a flat directory deleted: %v", rel(dir, got[0]))
			}
			write(t, filepath.Join(dir, "gone", "g.go"), "package g\n// back\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"gone/g.go"}) {
				t.Errorf("a flat directory made again: %v", rel(dir, got[0]))
			}
			save(t, filepath.Join(dir, "gone", "g.go"), "package g\n// again\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"gone/g.go"}) {
				t.Errorf("an edit in a flat directory made again: %v", rel(dir, got[0]))
			}

			w.SetDirs([]string{filepath.Join(dir, "link")})
			save(t, filepath.Join(dir, "lib", "lib.go"), "package lib\n// 2\n")
			save(t, filepath.Join(dir, "tree", "inner", "i.go"), "package inner\n// 2\n")
			if got := batches(t, w, 1); !slices.Equal(rel(dir, got[0]), []string{"tree/inner/i.go"}) {
				t.Errorf("after removing lib and tree/inner from the set: %v", rel(dir, got[0]))
			}
			w.SetDirs(nil)
			save(t, filepath.Join(dir, "real", "r.go"), "package r\n// 2\n")
			batches(t, w, 0)
		})
	}
}
