package revtree

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/inputfile"
)

// entry is one member of a crafted archive.
type entry struct {
	typ  byte
	name string
	link string // a link's target
	data string // a file's contents
}

func archiveOf(t *testing.T, entries []entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Typeflag: e.typ, Name: e.name, Linkname: e.link, Mode: 0o644, Size: int64(len(e.data))}
		if e.typ == tar.TypeDir {
			h.Mode = 0o755
		}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if e.typ == tar.TypeXGlobalHeader {
			h = &tar.Header{Typeflag: e.typ, PAXRecords: map[string]string{"comment": "0123456789abcdef"}}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.data))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// sandbox makes base/tree, the directory to extract into, and beside it
// base/sibling/canary, a file that must never change. Link targets in the
// cases name the sibling as SIBLING.
func sandbox(t *testing.T) (base, tree string) {
	t.Helper()
	base = t.TempDir()
	tree = filepath.Join(base, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "sibling"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "sibling", "canary"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return base, tree
}

// outside lists everything under base but tree, with each file's
// contents: after an extraction it must be the sandbox's canary alone.
func outside(t *testing.T, base string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(base, p)
		if rel == "tree" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			rel += "=" + string(data)
		} else if d.Type()&fs.ModeSymlink != 0 {
			rel += " (link)"
		}
		out = append(out, rel)
		return nil
	})
	return out
}

var untouched = []string{".", "sibling", "sibling/canary=original\n"}

func TestExtract(t *testing.T) {
	t.Setenv("TOOLC_MAX_INPUT", "1KiB")
	tests := []struct {
		name    string
		entries []entry
		// err is part of the error, or "" for none.
		err string
		// skipped are parts of the notes of what was left out, in order.
		skipped []string
		// files are the regular files of the tree afterwards, as
		// name=contents, read by following links.
		files []string
		// links are the links kept.
		links []string
	}{{
		name: "plain tree",
		entries: []entry{
			{typ: tar.TypeXGlobalHeader, name: "pax_global_header"},
			{typ: tar.TypeDir, name: "api/"},
			{typ: tar.TypeReg, name: "api/shop.cue", data: "package shop\n"},
			{typ: tar.TypeReg, name: "cue.mod/module.cue", data: "module: \"x.example\"\n"},
		},
		files: []string{"api/shop.cue=package shop\n", "cue.mod/module.cue=module: \"x.example\"\n"},
	}, {
		name: "links inside stay, even written before their targets",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "early.cue", link: "api/late.cue"},
			{typ: tar.TypeSymlink, name: "shared", link: "api"},
			{typ: tar.TypeReg, name: "api/late.cue", data: "late\n"},
			{typ: tar.TypeSymlink, name: "api/up.cue", link: "../api/late.cue"},
			{typ: tar.TypeReg, name: "shared/through.cue", data: "through a link to a directory inside\n"},
		},
		files: []string{"api/late.cue=late\n", "api/through.cue=through a link to a directory inside\n", "api/up.cue=late\n", "early.cue=late\n"},
		links: []string{"api/up.cue", "early.cue", "shared"},
	}, {
		name: "l1 -> . then l1/l2 -> .. then a file through both",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "l1", link: "."},
			{typ: tar.TypeDir, name: "l1/"},
			{typ: tar.TypeSymlink, name: "l1/l2", link: ".."},
			{typ: tar.TypeDir, name: "l1/l2/"},
			{typ: tar.TypeReg, name: "l1/l2/sibling/canary", data: "pwned\n"},
		},
		err: `"l1/l2": its path leads outside the tree through a symbolic link`,
	}, {
		name: "a link to outside, and a file through it",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "out", link: "../sibling"},
			{typ: tar.TypeReg, name: "out/canary", data: "pwned\n"},
		},
		err: "leads outside the tree",
	}, {
		name: "an absolute link, and a file through it",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "abs", link: "SIBLING"},
			{typ: tar.TypeReg, name: "abs/canary", data: "pwned\n"},
		},
		err: "leads outside the tree",
	}, {
		name: "a directory through a link to outside",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "out", link: "../sibling"},
			{typ: tar.TypeDir, name: "out/new/"},
		},
		err: "leads outside the tree",
	}, {
		name: "a link through a link to outside",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "out", link: "../sibling"},
			{typ: tar.TypeSymlink, name: "out/canary", link: "pwned"},
		},
		err: "leads outside the tree",
	}, {
		name: "links that lead outside, and nothing through them, are left out",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "up", link: ".."},
			{typ: tar.TypeSymlink, name: "canary.cue", link: "../sibling/canary"},
			{typ: tar.TypeSymlink, name: "abs.cue", link: "SIBLING/canary"},
			{typ: tar.TypeSymlink, name: "etc", link: "/etc"},
			{typ: tar.TypeSymlink, name: "l1", link: "."},
			{typ: tar.TypeDir, name: "l1/"},
			{typ: tar.TypeSymlink, name: "l1/l2", link: ".."},
			{typ: tar.TypeSymlink, name: "via.cue", link: "l2/sibling/canary"},
			{typ: tar.TypeReg, name: "ok.cue", data: "ok\n"},
		},
		skipped: []string{`up: a symbolic link to "..", which leads outside the tree`, `canary.cue: a symbolic link to "../sibling/canary", which leads outside the tree`, "abs.cue: a symbolic link to", "etc: a symbolic link to \"/etc\", which leads outside the tree", `l2: a symbolic link to "..", which leads outside the tree`, `via.cue: a symbolic link to "l2/sibling/canary", which leads outside the tree`},
		files:   []string{"ok.cue=ok\n"},
		links:   []string{"l1"},
	}, {
		name: "dangling links and loops are left out",
		entries: []entry{
			{typ: tar.TypeSymlink, name: "gone.cue", link: "nothing.cue"},
			{typ: tar.TypeSymlink, name: "a", link: "b"},
			{typ: tar.TypeSymlink, name: "b", link: "a"},
		},
		skipped: []string{`gone.cue: a symbolic link to "nothing.cue", which does not exist in the tree`, `a: a symbolic link to "b", which cannot be followed`, `b: a symbolic link to "a", which cannot be followed`},
	}, {
		name: "hard links, devices and FIFOs are not written",
		entries: []entry{
			{typ: tar.TypeReg, name: "f.cue", data: "f\n"},
			{typ: tar.TypeLink, name: "hard.cue", link: "f.cue"},
			{typ: tar.TypeLink, name: "hard-out", link: "../sibling/canary"},
			{typ: tar.TypeChar, name: "zero"},
			{typ: tar.TypeBlock, name: "disk"},
			{typ: tar.TypeFifo, name: "fifo.cue"},
		},
		skipped: []string{"hard.cue: a hard link, not written", "hard-out: a hard link, not written", "zero: not a file", "disk: not a file", "fifo.cue: not a file"},
		files:   []string{"f.cue=f\n"},
	}, {
		name: "files over the input limit are not written",
		entries: []entry{
			{typ: tar.TypeReg, name: "big.bin", data: strings.Repeat("x", 2048)},
			{typ: tar.TypeReg, name: "ok.cue", data: strings.Repeat("y", 1024)},
		},
		skipped: []string{"big.bin: 2048 bytes, over the 1KiB limit on input, not written"},
		files:   []string{"ok.cue=" + strings.Repeat("y", 1024)},
	}, {
		name:    "a name with ..",
		entries: []entry{{typ: tar.TypeReg, name: "../sibling/canary", data: "pwned\n"}},
		err:     `an entry named "../sibling/canary", which is not a path inside the tree`,
	}, {
		name:    "a name with .. inside",
		entries: []entry{{typ: tar.TypeReg, name: "a/../../sibling/canary", data: "pwned\n"}},
		err:     "not a path inside the tree",
	}, {
		name:    "an absolute name",
		entries: []entry{{typ: tar.TypeReg, name: "SIBLING/canary", data: "pwned\n"}},
		err:     "not a path inside the tree",
	}, {
		name:    "a directory named ..",
		entries: []entry{{typ: tar.TypeDir, name: "../"}},
		err:     "not a path inside the tree",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, tree := sandbox(t)
			sibling := filepath.Join(base, "sibling")
			for i := range tt.entries {
				e := &tt.entries[i]
				e.name = strings.ReplaceAll(e.name, "SIBLING", filepath.ToSlash(sibling))
				e.link = strings.ReplaceAll(e.link, "SIBLING", filepath.ToSlash(sibling))
			}
			skipped, err := Extract(archiveOf(t, tt.entries), tree)
			if got := outside(t, base); !slices.Equal(got, untouched) {
				t.Fatalf("the extraction wrote outside its directory: %q", got)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one that says %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != len(tt.skipped) {
				t.Fatalf("skipped %q, want %d notes like %q", skipped, len(tt.skipped), tt.skipped)
			}
			for i, want := range tt.skipped {
				if !strings.Contains(skipped[i], want) {
					t.Errorf("skipped[%d] = %q, want it to say %q", i, skipped[i], want)
				}
			}
			var files, links []string
			filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
				rel, _ := filepath.Rel(tree, p)
				rel = filepath.ToSlash(rel)
				if d.Type()&fs.ModeSymlink != 0 {
					links = append(links, rel)
					if fi, err := os.Stat(p); err != nil {
						t.Errorf("kept link %s: %v", rel, err)
						return nil
					} else if fi.IsDir() {
						return nil
					}
				}
				if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
					data, _ := os.ReadFile(p)
					files = append(files, rel+"="+string(data))
				}
				return nil
			})
			slices.Sort(files)
			if !slices.Equal(files, tt.files) {
				t.Errorf("files %q, want %q", files, tt.files)
			}
			if !slices.Equal(links, tt.links) {
				t.Errorf("links %q, want %q", links, tt.links)
			}
		})
	}
}

// TestMaterializeCrafted builds, in a real repository, a revision whose
// tree no checkout would write (git mktree takes duplicate names): a link
// l1 -> . beside a directory l1 that holds a link l2 -> .. beside a
// directory l2 with sibling/canary in it. Extracted naively into
// $TMPDIR/toolc-rev-X, l1/l2/sibling/canary is $TMPDIR/sibling/canary.
func TestMaterializeCrafted(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base, _ := sandbox(t)
	t.Setenv("TMPDIR", base)
	repo := t.TempDir()
	commit := craftedCommit(t, repo)

	_, err := Materialize(context.Background(), repo, commit)
	if err == nil || !strings.Contains(err.Error(), `"l1/l2": its path leads outside the tree through a symbolic link`) {
		t.Errorf("Materialize = %v, want an error about l1/l2", err)
	}
	if got := outside(t, base); !slices.Equal(got, untouched) {
		t.Errorf("Materialize wrote outside its directory, or left its directory behind: %q", got)
	}
}

// craftedCommit makes, in a new repository, the commit that
// TestMaterializeCrafted describes, and returns its id.
func craftedCommit(t *testing.T, repo string) string {
	t.Helper()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=toolc test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "init", "-q")
	blob := func(s string) string { return run(s, "hash-object", "-w", "--stdin") }
	canary := run("100644 blob "+blob("pwned\n")+"\tcanary\n", "mktree")
	sibling := run("040000 tree "+canary+"\tsibling\n", "mktree")
	l1 := run("120000 blob "+blob("..")+"\tl2\n040000 tree "+sibling+"\tl2\n", "mktree")
	top := run("120000 blob "+blob(".")+"\tl1\n040000 tree "+l1+"\tl1\n100644 blob "+blob("package x\n")+"\tx.cue\n", "mktree")
	return run("", "commit-tree", "-m", "crafted", top)
}

func TestMaterialize(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	commit := craftedCommit(t, repo)
	ctx := context.Background()
	for _, ref := range []string{"no-such-ref", "-v", "--output=x", commit + "~1"} {
		if _, err := Materialize(ctx, repo, ref); err != ErrNoRevision {
			t.Errorf("Materialize(%q) = %v, want ErrNoRevision", ref, err)
		}
	}
	if _, err := Materialize(ctx, t.TempDir(), "HEAD"); err == nil || !strings.Contains(err.Error(), ErrNotRepository.Error()) {
		t.Errorf("outside a repository: %v", err)
	}

	// A tree with a link to outside and a subdirectory, read from the
	// subdirectory.
	os.MkdirAll(filepath.Join(repo, "api"), 0o755)
	os.WriteFile(filepath.Join(repo, "api", "a.cue"), []byte("package a\n"), 0o644)
	os.Symlink("../../elsewhere", filepath.Join(repo, "api", "out"))
	gitIn(t, repo, "add", "api")
	gitIn(t, repo, "commit", "-q", "-m", "api")
	tree, err := Materialize(ctx, filepath.Join(repo, "api"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Remove()
	if tree.Prefix != "api/" || tree.Dir != filepath.Join(tree.Root, "api") || len(tree.Commit) < 40 {
		t.Errorf("tree = %+v", tree)
	}
	if data, err := os.ReadFile(filepath.Join(tree.Dir, "a.cue")); err != nil || string(data) != "package a\n" {
		t.Errorf("a.cue = %q, %v", data, err)
	}
	if len(tree.Skipped) != 1 || !strings.HasPrefix(tree.Skipped[0], `api/out: a symbolic link to "../../elsewhere", which leads outside the tree`) {
		t.Errorf("skipped = %q", tree.Skipped)
	}
	if err := tree.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tree.Root); err == nil {
		t.Error("Remove left the tree")
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=toolc test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestExtractBoundsTheTotal(t *testing.T) {
	kib := strings.Repeat("x", 1024)
	tests := []struct {
		name    string
		env     map[string]string
		entries []entry
		// err is part of the error, or "" for none.
		err string
	}{{
		name: "one file many times, within the bound",
		env:  map[string]string{MaxBytesEnv: "4KiB"},
		entries: []entry{
			{typ: tar.TypeReg, name: "a", data: kib}, {typ: tar.TypeReg, name: "b", data: kib},
			{typ: tar.TypeReg, name: "c", data: kib}, {typ: tar.TypeReg, name: "d", data: kib},
		},
	}, {
		name: "one file many times, past the bound",
		env:  map[string]string{MaxBytesEnv: "4KiB"},
		entries: []entry{
			{typ: tar.TypeReg, name: "a", data: kib}, {typ: tar.TypeReg, name: "b", data: kib},
			{typ: tar.TypeReg, name: "c", data: kib}, {typ: tar.TypeReg, name: "d", data: kib},
			{typ: tar.TypeReg, name: "e", data: "1"},
		},
		err: "the revision's files come to more than 4KiB, the limit on what toolc writes of a revision (a tree can name one file many times); set TOOLC_MAX_TREE to raise it, as in TOOLC_MAX_TREE=16KiB",
	}, {
		name: "the same name again counts again",
		env:  map[string]string{MaxBytesEnv: "2KiB"},
		entries: []entry{
			{typ: tar.TypeReg, name: "a", data: kib}, {typ: tar.TypeReg, name: "a", data: kib},
			{typ: tar.TypeReg, name: "a", data: kib},
		},
		err: "more than 2KiB",
	}, {
		name: "entries that write nothing count",
		env:  map[string]string{MaxEntriesEnv: "3"},
		entries: []entry{
			{typ: tar.TypeDir, name: "d/"}, {typ: tar.TypeLink, name: "h", link: "x"},
			{typ: tar.TypeSymlink, name: "l", link: "d"}, {typ: tar.TypeDir, name: "e/"},
		},
		err: "the revision's tree has more than 3 entries, the limit on what toolc writes of a revision (set TOOLC_MAX_TREE_ENTRIES to raise it, as in TOOLC_MAX_TREE_ENTRIES=12)",
	}, {
		name:    "a bound that is no size",
		env:     map[string]string{MaxBytesEnv: "lots"},
		entries: []entry{{typ: tar.TypeReg, name: "a", data: "x"}},
		err:     `$TOOLC_MAX_TREE: "lots" is not a size`,
	}, {
		name:    "a bound that is no number",
		env:     map[string]string{MaxEntriesEnv: "-1"},
		entries: []entry{{typ: tar.TypeReg, name: "a", data: "x"}},
		err:     `$TOOLC_MAX_TREE_ENTRIES: "-1" is not a number of entries`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(MaxBytesEnv, "")
			t.Setenv(MaxEntriesEnv, "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			_, err := Extract(archiveOf(t, tt.entries), dir)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Extract: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Extract = %v, want an error with %q", err, tt.err)
			}
			// Nothing past the bound on bytes was written.
			var size int64
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
					size += fi.Size()
				}
				return nil
			})
			if max := tt.env[MaxBytesEnv]; max != "" {
				if n, err := inputfile.ParseSize(max); err == nil && size > n {
					t.Errorf("%d bytes written, past the bound of %s", size, max)
				}
			}
		})
	}
}

// TestMaterializeBoundsTheTotal builds the revision of the issue: a tree
// that names one blob many times, through subtrees that each name the
// level below many times, so that a revision of a few KiB archives to far
// more. Materialize stops at the bound and leaves nothing in $TMPDIR.
func TestMaterializeBoundsTheTotal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	t.Setenv("TMPDIR", base)
	t.Setenv(MaxBytesEnv, "8MiB")
	t.Setenv(MaxEntriesEnv, "")
	repo := t.TempDir()
	commit := amplifiedCommit(t, repo)

	_, err := Materialize(context.Background(), repo, commit)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Entries || tooLarge.Limit != 8<<20 {
		t.Fatalf("Materialize = %v, want the bound of 8MiB on bytes", err)
	}
	if left, _ := os.ReadDir(base); len(left) != 0 {
		t.Errorf("Materialize left %d entries in $TMPDIR, such as %s", len(left), left[0].Name())
	}

	// The same revision, within raised bounds, is written whole: the bound
	// is what stopped it.
	t.Setenv(MaxBytesEnv, "64MiB")
	tree, err := Materialize(context.Background(), repo, commit)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Remove()
	if _, err := os.Stat(filepath.Join(tree.Root, "d0", "d1", "f9")); err != nil {
		t.Error(err)
	}
}

// amplifiedCommit makes a commit whose tree holds 10 directories of 10
// directories of 10 names for one 32 KiB blob: a few KiB of git objects,
// and 32 MiB archived.
func amplifiedCommit(t *testing.T, repo string) string {
	t.Helper()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=toolc test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "init", "-q")
	blob := run(strings.Repeat("x", 32<<10), "hash-object", "-w", "--stdin")
	level := func(typ, mode, obj, prefix string) string {
		var b strings.Builder
		for i := range 10 {
			fmt.Fprintf(&b, "%s %s %s\t%s%d\n", mode, typ, obj, prefix, i)
		}
		return run(b.String(), "mktree")
	}
	files := level("blob", "100644", blob, "f")
	mid := level("tree", "040000", files, "d")
	top := level("tree", "040000", mid, "d")
	return run("", "commit-tree", "-m", "amplified", top)
}
