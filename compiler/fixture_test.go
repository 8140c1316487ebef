package compiler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/lock"
)

// A fixture is a txtar archive: the files of a contract tree, and
// expectations next to them.
//
//	-- want --
//	FILE:LINE:COL RULE [MESSAGE-REGEXP]
//	FILE:LINE:COL RULE+ack [MESSAGE-REGEXP]   (a warning that a toolc:ignore comment acknowledges)
//	...
//	-- args --      (optional) the patterns, one per line; default ./...
//	-- error --     (optional) a regexp that Compile's error must match
//	-- toolc.lock -- (optional) a lock file, passed as Config.Lock
//
// Every diagnostic must be wanted and every want must be matched, so a
// fixture pins exactly what toolc reports, in which file, at which line and
// column, under which rule. Lines of "want" that start with # are comments.
type fixture struct {
	name  string
	files map[string][]byte
	want  []want
	args  []string
	err   *regexp.Regexp
}

type want struct {
	pos  string // file:line:col
	rule string
	ack  bool // the diagnostic is acknowledged
	msg  *regexp.Regexp
	line int // in the fixture, for messages
}

func parseFixture(t *testing.T, path string) fixture {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture{name: filepath.Base(path), files: map[string][]byte{}}
	for _, f := range ar.Files {
		switch f.Name {
		case "want":
			for i, line := range strings.Split(string(f.Data), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				fields := strings.SplitN(line, " ", 3)
				if len(fields) < 2 {
					t.Fatalf("%s: want line %d: need FILE:LINE:COL RULE [REGEXP]", path, i+1)
				}
				w := want{pos: fields[0], rule: fields[1], line: i + 1}
				w.rule, w.ack = strings.CutSuffix(w.rule, "+ack")
				if len(fields) == 3 {
					w.msg = regexp.MustCompile(fields[2])
				}
				fx.want = append(fx.want, w)
			}
		case "args":
			fx.args = strings.Fields(string(f.Data))
		case "error":
			fx.err = regexp.MustCompile(strings.TrimSpace(string(f.Data)))
		default:
			fx.files[f.Name] = f.Data
		}
	}
	return fx
}

// writeTree writes files into dir. A file named with the suffix " (0000)"
// is written without permissions, to test unreadable input; where that
// does not make it unreadable, as for root, the test is skipped.
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, " (0000)"); ok {
			name, mode = n, 0
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, mode); err != nil {
			t.Fatal(err)
		}
		if mode == 0 {
			if f, err := os.Open(path); err == nil {
				f.Close()
				t.Skipf("%s: a file with mode 0000 is readable here (running as root?)", name)
			}
		}
	}
}

func runFixture(t *testing.T, path string) []diag.Diagnostic {
	fx := parseFixture(t, path)
	dir := t.TempDir()
	writeTree(t, dir, fx.files)
	cfg := compiler.Config{Dir: dir}
	if _, ok := fx.files[lock.FileName]; ok {
		l, err := lock.LoadFile(filepath.Join(dir, lock.FileName))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Lock = l
	}
	res, err := compiler.Compile(cfg, fx.args...)
	if fx.err != nil {
		if err == nil || !fx.err.MatchString(err.Error()) {
			t.Fatalf("Compile error = %v, want match for %q", err, fx.err)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	matched := make([]bool, len(fx.want))
	for _, d := range res.Diagnostics {
		pos := fmt.Sprintf("%s:%d:%d", filepath.ToSlash(d.Pos.File), d.Pos.Line, d.Pos.Column)
		i := slices.IndexFunc(fx.want, func(w want) bool {
			return w.pos == pos && w.rule == d.Rule && w.ack == d.Acknowledged && (w.msg == nil || w.msg.MatchString(d.Message))
		})
		for i >= 0 && matched[i] {
			j := slices.IndexFunc(fx.want[i+1:], func(w want) bool {
				return w.pos == pos && w.rule == d.Rule && w.ack == d.Acknowledged && (w.msg == nil || w.msg.MatchString(d.Message))
			})
			if j < 0 {
				i = -1
				break
			}
			i += j + 1
		}
		if i < 0 {
			ack := ""
			if d.Acknowledged {
				ack = "+ack"
			}
			t.Errorf("unexpected diagnostic: %s %s%s %s", pos, d.Rule, ack, d.Message)
			continue
		}
		matched[i] = true
	}
	for i, w := range fx.want {
		if !matched[i] {
			msg := ""
			if w.msg != nil {
				msg = " " + w.msg.String()
			}
			t.Errorf("want line %d: no diagnostic %s %s%s", w.line, w.pos, w.rule, msg)
		}
	}
	return res.Diagnostics
}

func fixtures(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/%s", dir)
	}
	return paths
}

// TestRules runs one fixture per rule, and asserts that every rule has
// one: a rule without a fixture is a rule nobody has seen fail.
func TestRules(t *testing.T) {
	for _, r := range compiler.Rules() {
		t.Run(r.ID, func(t *testing.T) {
			path := filepath.Join("testdata", "rules", r.ID+".txtar")
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("rule %s has no fixture: %v", r.ID, err)
			}
			ds := runFixture(t, path)
			if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Rule == r.ID }) {
				t.Errorf("fixture for %s reports no %s diagnostic", r.ID, r.ID)
			}
		})
	}
}

// TestCases runs the fixtures that are not about one rule: several problems
// in one file, packages spread over files, modules and plain directories,
// bad patterns and unreadable files.
func TestCases(t *testing.T) {
	for _, path := range fixtures(t, "cases") {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runFixture(t, path)
		})
	}
}

func TestRuleValues(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range compiler.Rules() {
		switch {
		case r.ID == "" || r.Doc == "" || r.Check == nil:
			t.Errorf("rule %q must have an ID, a Doc and a Check", r.ID)
		case seen[r.ID]:
			t.Errorf("rule ID %q is registered twice", r.ID)
		case !regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(r.ID):
			t.Errorf("rule ID %q is not lower-case words joined by hyphens", r.ID)
		}
		seen[r.ID] = true
	}
}
