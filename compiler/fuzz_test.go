package compiler_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
)

// FuzzCompile feeds arbitrary CUE source through load, evaluation and every
// rule. Whatever the input, Compile must not panic, every diagnostic must
// name a rule, and no position may point into the embedded schema. The seed
// corpus under testdata/fuzz runs in every `go test`.
func FuzzCompile(f *testing.F) {
	for _, path := range []string{"../examples/weather/weather.cue"} {
		if src, err := os.ReadFile(path); err == nil {
			f.Add(string(src))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "contract.cue"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
		if err != nil {
			return // input problems, such as no package clause, are errors, not panics
		}
		if !res.HasErrors() {
			// A contract that passes every rule makes a catalog file: a
			// value no rule caught, such as a number beyond float64, once
			// failed here as an "internal error".
			if _, err := res.Catalog.Marshal(); err != nil {
				t.Errorf("a contract without errors makes no catalog: %v", err)
			}
		}
		for _, d := range res.Diagnostics {
			if d.Rule == "" || d.Message == "" {
				t.Errorf("diagnostic without rule or message: %+v", d)
			}
			if strings.Contains(d.Pos.File, "cue.mod") || strings.HasSuffix(d.Pos.File, "schema.cue") {
				t.Errorf("diagnostic points into the schema: %v", d)
			}
			if strings.Contains(d.Message, "empty disjunction") {
				t.Errorf("disjunction noise reached the user: %v", d)
			}
		}
	})
}
