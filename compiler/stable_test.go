package compiler_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/lock"
)

// A diff fixture is a txtar archive of two contract trees, before/ and
// after/, and the changes that compiler.Diff must find between them:
//
//	-- want --
//	FILE[:LINE:COL] RULE breaking|compatible|allowed [MESSAGE-REGEXP]
//	-- args --      (optional) the patterns, one per line; default ./...
//
// FILE is relative to after/; a change with no position in the new
// contracts (a service that is gone) is at toolc.lock. before/ is compiled,
// locked, written to after/toolc.lock and read back, so every fixture also
// goes through the lock file. As with rule fixtures, every change must be
// wanted and every want matched.
type diffWant struct {
	pos, rule, kind string
	msg             *regexp.Regexp
	line            int
}

func runDiffFixture(t *testing.T, path string) []lock.Change {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, after := map[string][]byte{}, map[string][]byte{}
	var wants []diffWant
	var args []string
	for _, f := range ar.Files {
		switch {
		case f.Name == "want":
			for i, line := range strings.Split(string(f.Data), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				fields := strings.SplitN(line, " ", 4)
				if len(fields) < 3 {
					t.Fatalf("%s: want line %d: need FILE:LINE:COL RULE KIND [REGEXP]", path, i+1)
				}
				w := diffWant{pos: fields[0], rule: fields[1], kind: fields[2], line: i + 1}
				if len(fields) == 4 {
					w.msg = regexp.MustCompile(fields[3])
				}
				wants = append(wants, w)
			}
		case f.Name == "args":
			args = strings.Fields(string(f.Data))
		case strings.HasPrefix(f.Name, "before/"):
			before[strings.TrimPrefix(f.Name, "before/")] = f.Data
		case strings.HasPrefix(f.Name, "after/"):
			after[strings.TrimPrefix(f.Name, "after/")] = f.Data
		default:
			t.Fatalf("%s: file %s is in neither before/ nor after/", path, f.Name)
		}
	}
	dir := t.TempDir()
	beforeDir, afterDir := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	writeTree(t, beforeDir, before)
	writeTree(t, afterDir, after)

	old, err := compiler.Compile(compiler.Config{Dir: beforeDir}, args...)
	if err != nil {
		t.Fatalf("compiling before/: %v", err)
	}
	if old.HasErrors() {
		t.Fatalf("before/ has errors: %v", old.Diagnostics)
	}
	lockFile := filepath.Join(afterDir, lock.FileName)
	if err := lock.FromCatalog(old.Catalog).WriteFile(lockFile); err != nil {
		t.Fatal(err)
	}
	l, err := lock.LoadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: afterDir}, args...)
	if err != nil {
		t.Fatalf("compiling after/: %v", err)
	}
	if res.HasErrors() {
		t.Fatalf("after/ has errors: %v", res.Diagnostics)
	}
	changes := compiler.Diff(res, l)

	matched := make([]bool, len(wants))
	for _, c := range changes {
		pos := c.Pos.File
		if c.Pos.Line > 0 {
			pos = fmt.Sprintf("%s:%d:%d", c.Pos.File, c.Pos.Line, c.Pos.Column)
		}
		kind := "compatible"
		switch {
		case c.Breaking && c.Allowed:
			kind = "allowed"
		case c.Breaking:
			kind = "breaking"
		}
		i := -1
		for j, w := range wants {
			if !matched[j] && w.pos == pos && w.rule == c.Rule && w.kind == kind && (w.msg == nil || w.msg.MatchString(c.Message)) {
				i = j
				break
			}
		}
		if i < 0 {
			t.Errorf("unexpected change: %s %s %s %s", pos, c.Rule, kind, c.Message)
			continue
		}
		matched[i] = true
	}
	for i, w := range wants {
		if !matched[i] {
			msg := ""
			if w.msg != nil {
				msg = " " + w.msg.String()
			}
			t.Errorf("want line %d: no change %s %s %s%s", w.line, w.pos, w.rule, w.kind, msg)
		}
	}
	return changes
}

// TestDiff runs the diff fixtures. Each kind of change has one, named for
// its rule ID, which must report that kind; the others cover service
// renames, major version bumps, patterns and packages with errors. Every
// change must be of a listed kind, breaking exactly when its kind is.
func TestDiff(t *testing.T) {
	paths := fixtures(t, "diff")
	kinds := map[string]lock.Kind{}
	for _, k := range lock.Kinds() {
		if _, dup := kinds[k.ID]; dup {
			t.Errorf("kind %s is listed twice", k.ID)
		}
		if !regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(k.ID) || k.Doc == "" {
			t.Errorf("kind %q needs a kebab-case ID and a doc", k.ID)
		}
		kinds[k.ID] = k
		path := filepath.Join("testdata", "diff", k.ID+".txtar")
		if !slices.Contains(paths, path) {
			t.Errorf("change kind %s has no fixture %s", k.ID, path)
		}
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			changes := runDiffFixture(t, path)
			if _, ok := kinds[name]; ok && !slices.ContainsFunc(changes, func(c lock.Change) bool { return c.Rule == name }) {
				t.Errorf("fixture for %s reports no %s change", name, name)
			}
			for _, c := range changes {
				k, ok := kinds[c.Rule]
				switch {
				case !ok:
					t.Errorf("change %s is of no listed kind", c.Rule)
				case k.Breaking != c.Breaking:
					t.Errorf("change %s: Breaking = %v, its kind says %v", c.Rule, c.Breaking, k.Breaking)
				case c.Allowed && !c.Breaking:
					t.Errorf("change %s is allowed but not breaking", c.Rule)
				}
			}
		})
	}
}
