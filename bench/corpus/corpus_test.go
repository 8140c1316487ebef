package corpus

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
)

// testConfig is small enough for `go test ./...` and large enough to use
// every domain, verb and field template at least once, which
// TestCorpusCoversVocabulary checks.
var testConfig = Config{Services: len(domains), Tools: 12, Seed: 7}

func TestCorpusPassesToolcCheckAndCueVet(t *testing.T) {
	dir := t.TempDir()
	st, err := Write(dir, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if st.Services != testConfig.Services || st.Tools != testConfig.Services*testConfig.Tools {
		t.Fatalf("stats: %v; want %d services of %d tools", st, testConfig.Services, testConfig.Tools)
	}

	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	for _, d := range res.Diagnostics {
		if d.Severity == diag.Error {
			report.WriteString(d.String() + "\n")
		}
	}
	if res.HasErrors() {
		t.Fatalf("toolc check reports errors in the generated corpus:\n%s", report.String())
	}
	tools := 0
	for _, s := range res.Catalog.Services {
		tools += len(s.Tools)
	}
	if len(res.Catalog.Services) != st.Services || tools != st.Tools {
		t.Errorf("catalog has %d services and %d tools; the generator wrote %d and %d", len(res.Catalog.Services), tools, st.Services, st.Tools)
	}

	cue, err := exec.LookPath("cue")
	if err != nil {
		t.Skip("cue not on PATH (go install cuelang.org/go/cmd/cue@v0.17.1); skipping the cue vet half")
	}
	cmd := exec.Command(cue, "vet", "-c", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cue vet -c ./... on the generated corpus: %v\n%s", err, out)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(testConfig), Generate(testConfig)
	if len(a) != len(b) {
		t.Fatalf("two runs gave %d and %d files", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("two runs differ at %s", a[i].Name)
		}
	}
	other := Generate(Config{Services: testConfig.Services, Tools: testConfig.Tools, Seed: testConfig.Seed + 1})
	same := len(other) == len(a)
	for i := 0; same && i < len(a); i++ {
		same = bytes.Equal(a[i].Data, other[i].Data)
	}
	if same {
		t.Error("seeds 7 and 8 gave the same corpus")
	}
}

// TestCorpusCoversVocabulary makes sure that the corpus that the other test
// checks uses every verb and field template, so that none of them can be
// invalid unnoticed.
func TestCorpusCoversVocabulary(t *testing.T) {
	var all strings.Builder
	for _, f := range Generate(testConfig) {
		if strings.HasPrefix(f.Name, "services/") {
			all.Write(f.Data)
		}
	}
	text := all.String()
	fieldLine := regexp.MustCompile(`(?m)^\t\t\t([a-z0-9_]+): \{type: "([a-z]+)"`)
	seen := map[string]bool{}
	for _, m := range fieldLine.FindAllStringSubmatch(text, -1) {
		seen[m[1]+" "+m[2]] = true
		if strings.HasSuffix(m[1], "_id") && m[2] == "string" {
			seen["{noun}_id string"] = true
		}
	}
	for _, ts := range [][]fieldTmpl{fieldTmpls, responseTmpls} {
		for _, tm := range ts {
			if !seen[tm.name+" "+tm.typ] {
				t.Errorf("field template %s (%s) is never used", tm.name, tm.typ)
			}
		}
	}
	for _, v := range verbs {
		if !regexp.MustCompile(`(?m)^tools: [a-z0-9]+_` + v.name + `_`).MatchString(text) {
			t.Errorf("verb %s is never used", v.name)
		}
	}
	for _, key := range []string{"strict:", "deprecated:", "examples: [{", "default:", "title:", "annotations:", "response: {", "mcp: title:", "uniqueItems:", "exclusiveMinimum:", "exclusiveMaximum:", "format:", "pattern:", "enum:"} {
		if !strings.Contains(text, key) {
			t.Errorf("the corpus has no %q", key)
		}
	}
}

func TestWriteRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.cue"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Config{Services: 1, Tools: 1, Seed: 1}); err == nil {
		t.Fatal("Write into a non-empty directory succeeded")
	}
}

func TestForTools(t *testing.T) {
	for _, n := range []int{100, 500, 2000} {
		cfg := ForTools(n)
		if got := cfg.Services * cfg.Tools; got != n {
			t.Errorf("ForTools(%d) gives %d tools", n, got)
		}
	}
}
