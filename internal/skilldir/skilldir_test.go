package skilldir

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const manifest = "---\nname: pdf\ndescription: Fill PDF forms\nmetadata: {version: 2, beta: true, tags: [a, b], at: 2026-09-01}\n---\n# PDF\n"

func TestRead(t *testing.T) {
	base := t.TempDir()
	write(t, base, map[string]string{"skills/pdf/SKILL.md": manifest, "skills/pdf/b/x.md": "x", "skills/pdf/a.txt": "a"})
	sk, err := Read(base, "skills/pdf")
	if err != nil {
		t.Fatal(err)
	}
	if sk.Name != "pdf" || sk.Description != "Fill PDF forms" {
		t.Errorf("name %q, description %q", sk.Name, sk.Description)
	}
	want := map[string]any{"name": "pdf", "description": "Fill PDF forms", "metadata": map[string]any{"version": int64(2), "beta": true, "tags": []any{"a", "b"}, "at": "2026-09-01"}}
	if !reflect.DeepEqual(sk.Frontmatter, want) {
		t.Errorf("frontmatter %#v, want %#v", sk.Frontmatter, want)
	}
	var paths []string
	for _, f := range sk.Files {
		paths = append(paths, fmt.Sprintf("%s %d", f.Path, f.Size))
	}
	if got := strings.Join(paths, ", "); got != fmt.Sprintf("SKILL.md %d, a.txt 1, b/x.md 1", len(manifest)) {
		t.Errorf("files %s", got)
	}
	// sha256 of "a"
	if sk.Files[1].Digest != "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" {
		t.Errorf("digest of a.txt %s", sk.Files[1].Digest)
	}
	// List lists the same files, with their sizes and no digests.
	files, err := List(base, "skills/pdf")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, f := range files {
		listed = append(listed, fmt.Sprintf("%s %d %q", f.Path, f.Size, f.Digest))
	}
	if got, want := strings.Join(listed, ", "), fmt.Sprintf(`SKILL.md %d "", a.txt 1 "", b/x.md 1 ""`, len(manifest)); got != want {
		t.Errorf("List = %s, want %s", got, want)
	}
}

func TestReadRefuses(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.md": "secret"})
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, base string)
		want  string
		// frontmatter: a problem of SKILL.md's frontmatter, which List,
		// reading no file, does not see.
		frontmatter bool
	}{
		{"no SKILL.md", func(t *testing.T, base string) { write(t, base, map[string]string{"skills/pdf/x.md": "x"}) }, "has no SKILL.md", false},
		{"a symbolic link out", func(t *testing.T, base string) {
			write(t, base, map[string]string{"skills/pdf/SKILL.md": manifest})
			if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(base, "skills/pdf/secret.md")); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file", false},
		{"a directory linked out", func(t *testing.T, base string) {
			os.MkdirAll(filepath.Join(base, "skills"), 0o755)
			if err := os.Symlink(outside, filepath.Join(base, "skills/pdf")); err != nil {
				t.Fatal(err)
			}
		}, "skill directory skills/pdf leaves the contract's directory through a symbolic link (skills/pdf)", false},
		{"too many files", func(t *testing.T, base string) {
			files := map[string]string{"skills/pdf/SKILL.md": manifest}
			for i := range MaxFiles {
				files[fmt.Sprintf("skills/pdf/f%d", i)] = "x"
			}
			write(t, base, files)
		}, "more than 512 files", false},
		{"too large", func(t *testing.T, base string) {
			files := map[string]string{"skills/pdf/SKILL.md": manifest}
			for i := range 5 {
				files[fmt.Sprintf("skills/pdf/f%d", i)] = strings.Repeat("x", 4<<20)
			}
			write(t, base, files)
		}, "more than 16 MiB", false},
		{"an alias", func(t *testing.T, base string) {
			write(t, base, map[string]string{"skills/pdf/SKILL.md": "---\nname: &n pdf\ndescription: *n\n---\n"})
		}, "alias", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			tc.setup(t, base)
			_, err := Read(base, "skills/pdf")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want an error saying %q", err, tc.want)
			}
			if _, err := List(base, "skills/pdf"); !tc.frontmatter && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("List = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestDescribe reads SKILL.md's description alone, through the same
// guarded reads as Read: a symbolic link out of the contract's directory
// or a path that leaves it is refused, not followed.
func TestDescribe(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, map[string]string{"skills/x/SKILL.md": manifest})
	base := t.TempDir()
	write(t, base, map[string]string{"skills/pdf/SKILL.md": manifest, "skills/nofront/SKILL.md": "# none\n"})
	if err := os.Symlink(filepath.Join(outside, "skills", "x"), filepath.Join(base, "skills", "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want, err string }{
		{dir: "skills/pdf", want: "Fill PDF forms"},
		{dir: "skills/nofront", err: "skills/nofront/SKILL.md: the file does not begin with YAML frontmatter"},
		{dir: "skills/missing", err: "skills/missing/SKILL.md does not exist"},
		{dir: "../x", err: "must be a slash-separated path below the contract's directory"},
		{dir: "skills/link", err: "symbolic link"},
	} {
		got, err := Describe(base, tc.dir)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Describe(%s) = %q, %v; want %q", tc.dir, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Describe(%s) = %q, %v; want an error with %q", tc.dir, got, err, tc.err)
		}
	}
}
