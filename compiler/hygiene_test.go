package compiler_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
)

// noise is CUE's wording that must never reach a contract author: toolc
// maps what CUE finds to a rule and a message of its own.
var noise = regexp.MustCompile(`empty disjunction|_\|_|#(String|Integer|Number|Boolean|Array)Field`)

// TestDiagnosticsPointIntoUserFiles runs every fixture and holds each
// diagnostic to what DESIGN.md pins: a position in one of the user's own
// files, inside that file, never in the schema (embedded, copied into
// cue.mod/pkg, or a package of toolc's own module), and no raw CUE
// disjunction noise in the message.
func TestDiagnosticsPointIntoUserFiles(t *testing.T) {
	paths := append(fixtures(t, "rules"), fixtures(t, "cases")...)
	for _, p := range paths {
		fx := parseFixture(t, p)
		if fx.err != nil {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), ".txtar"), func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, fx.files)
			res, err := compiler.Compile(compiler.Config{Dir: dir}, fx.args...)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			for _, d := range res.Diagnostics {
				file := filepath.ToSlash(d.Pos.File)
				src, ok := fx.files[file]
				switch {
				case file == "" || d.Pos.Line == 0 || d.Pos.Column == 0:
					t.Errorf("diagnostic without a full position: %v", d)
				case strings.HasPrefix(file, "cue.mod/") || path.Base(file) == "schema.cue":
					t.Errorf("diagnostic points into the schema: %v", d)
				case !ok:
					t.Errorf("diagnostic points outside the fixture's files: %v", d)
				case d.Pos.Line > strings.Count(string(src), "\n")+1:
					t.Errorf("diagnostic points past the end of %s: %v", file, d)
				}
				if noise.MatchString(d.Message) {
					t.Errorf("CUE noise in a message: %v", d)
				}
			}
		})
	}
}

// TestUnreadableFile checks that a .cue file that cannot be opened stops
// the run with an error naming it, as the error-unreadable-file fixture
// does where mode 0000 files are unreadable. A dangling symlink cannot be
// opened even by root.
func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"contracts/open/open.cue": []byte("package open\n")})
	if err := os.MkdirAll(filepath.Join(dir, "contracts", "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.cue", filepath.Join(dir, "contracts", "secret", "secret.cue")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	for _, args := range [][]string{nil, {"./contracts/secret"}} {
		_, err := compiler.Compile(compiler.Config{Dir: dir}, args...)
		want := filepath.Join("contracts", "secret", "secret.cue") + ": no such file or directory"
		if err == nil || err.Error() != want {
			t.Errorf("Compile(%q) error = %v, want %q", args, err, want)
		}
	}
}
