package main

import (
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/internal/doctext"
	"github.com/toolc/toolc/scaffold"
)

// The README's rule table and its contract example are derived from the
// code; these tests fail when the two drift apart.
func TestREADMERules(t *testing.T) {
	readme := docs(t).All()
	_, rest, ok := strings.Cut(readme, "<!-- rules:begin -->\n")
	table, _, ok2 := strings.Cut(rest, "<!-- rules:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no rules:begin/rules:end block")
	}
	if want := compiler.RulesMarkdown(); table != want {
		t.Errorf("README.md rule table is stale; replace it with the output of `toolc rules --format markdown`:\n%s", want)
	}
}

func TestREADMEExample(t *testing.T) {
	readme := docs(t).All()
	example := readFile(t, "../../examples/weather/weather.cue")
	if !strings.Contains(readme, "```cue\n"+example+"```") {
		t.Error("README.md does not quote examples/weather/weather.cue as it is")
	}
}

// docs returns toolc's documentation, README.md and docs/*.md, in which
// the README tests find what they hold to the code by heading or marker.
func docs(t *testing.T) *doctext.Docs {
	t.Helper()
	return doctext.Read(t)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestREADMEHandler checks that the README quotes, under Handlers, the
// main.go that toolc init writes, as it is; TestInit builds and serves it.
func TestREADMEHandler(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-tools")
	if _, err := scaffold.Init(dir, scaffold.SDK{Version: "v1.0.0"}); err != nil {
		t.Fatal(err)
	}
	handler := readFile(t, filepath.Join(dir, "main.go"))
	section := docs(t).MustSection(t, "Handlers")
	if !strings.Contains(section, "```go\n"+handler+"```") {
		t.Errorf("README.md's Handlers section does not quote the main.go of toolc init my-tools as it is:\n%s", handler)
	}
}

// TestREADMEHandlerTest checks that the README quotes, under Testing a
// handler, the main_test.go that toolc init writes, as it is; TestInit
// runs it with go test.
func TestREADMEHandlerTest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-tools")
	if _, err := scaffold.Init(dir, scaffold.SDK{Version: "v1.0.0"}); err != nil {
		t.Fatal(err)
	}
	test := readFile(t, filepath.Join(dir, "main_test.go"))
	section := docs(t).MustSection(t, "Testing a handler: `toolctest`")
	if !strings.Contains(section, "```go\n"+test+"```") {
		t.Errorf("README.md's Testing a handler section does not quote the main_test.go of toolc init my-tools as it is:\n%s", test)
	}
}

// TestGoVersion keeps one Go version everywhere: go.mod's go line is the
// highest that toolc's requirements declare (the true minimum, which go
// mod tidy neither raises nor lowers), toolc init writes the same, and the
// README asks for that release.
func TestGoVersion(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", []byte(readFile(t, filepath.Join(root, "go.mod"))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if mod.Go.Version != scaffold.GoVersion {
		t.Errorf("go.mod says go %s, and toolc init writes go %s (scaffold.GoVersion)", mod.Go.Version, scaffold.GoVersion)
	}

	list := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.GoVersion}}", "all")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	highest, by := "", ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, v, _ := strings.Cut(line, " ")
		if path != scaffold.ModulePath && v != "" && version.Compare("go"+v, "go"+highest) > 0 {
			highest, by = v, path
		}
	}
	if mod.Go.Version != highest {
		t.Errorf("go.mod says go %s, but the highest go line among its requirements is %s (%s); make go.mod, scaffold.GoVersion and the README say %s",
			mod.Go.Version, highest, by, highest)
	}

	readme := docs(t).All()
	release := strings.Join(strings.SplitN(scaffold.GoVersion, ".", 3)[:2], ".")
	stated := regexp.MustCompile(`Go (1\.\d+)(\.\d+)? or newer`).FindAllStringSubmatch(readme, -1)
	if len(stated) == 0 {
		t.Error(`README.md does not say which Go it needs ("Go 1.N or newer")`)
	}
	for _, m := range stated {
		if m[1] != release || m[2] != "" {
			t.Errorf("README.md says %q; go.mod needs Go %s (say \"Go %s or newer\")", m[0], scaffold.GoVersion, release)
		}
	}
}

// TestREADMEWorkflow holds the README's GitHub Actions workflow to the
// "In CI" recipe above it (which TestInit runs on a fresh project): a user
// copies the workflow, so a step the recipe has and the workflow lacks (it
// once lacked toolc gen go --check) is a check their CI silently skips.
func TestREADMEWorkflow(t *testing.T) {
	after := docs(t).MustSection(t, "In CI")
	_, yaml, ok := strings.Cut(after, "```yaml\n")
	yaml, _, ok2 := strings.Cut(yaml, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no yaml block under ## In CI")
	}
	var runs []string
	for _, line := range strings.Split(yaml, "\n") {
		if _, run, ok := strings.Cut(line, "- run: "); ok {
			// The workflow sets CUE_REGISTRY inline and diffs against the
			// pull request's base, where the recipe says origin/main.
			run = strings.TrimPrefix(run, "CUE_REGISTRY=none ")
			run = strings.ReplaceAll(run, "origin/${{ github.base_ref }}", "origin/main")
			runs = append(runs, strings.TrimSpace(run))
		}
	}
	for _, step := range readmeCIRecipe(t) {
		if !slices.Contains(runs, strings.TrimSpace(step)) {
			t.Errorf("the README's workflow has no step %q of the In CI recipe; its run steps: %q", step, runs)
		}
	}
}

// TestREADMEInstallFromCheckout runs the README's install from a checkout
// as printed, in this checkout, with a GOPATH of its own (the module
// cache stays the shared one): go install writes toolc into $(go env
// GOPATH)/bin, the export puts that on PATH, and toolc version runs it.
func TestREADMEInstallFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("installs toolc")
	}
	after := docs(t).MustAfter(t, "To install the binary, from the checkout:\n\n```sh\n")
	script, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("README.md has no sh block after \"To install the binary, from the checkout:\"")
	}
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gopath := t.TempDir()
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOPATH="+gopath, "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOBIN=", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's install, run as printed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(gopath, "bin", "toolc")); err != nil {
		t.Errorf("go install wrote no toolc into $(go env GOPATH)/bin: %v", err)
	}
	if !strings.HasPrefix(string(out), "toolc ") {
		t.Errorf("toolc version printed %q", out)
	}
}

// TestDocsLayout: the Layout table of docs/layout.md has a row for every
// directory at the top of the module that holds a Go package, so that a
// new package is said what it is for where readers look.
func TestDocsLayout(t *testing.T) {
	layout := docs(t).MustSection(t, "Layout")
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/toolc/toolc/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || rel == "." {
			continue
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if !seen[top] && !strings.Contains(layout, "| `"+top+"/") {
			t.Errorf("docs/layout.md's Layout has no row for %s/", top)
		}
		seen[top] = true
	}
	if len(seen) < 20 {
		t.Fatalf("go list found %d top-level directories, too few to be this module's", len(seen))
	}
}

// TestDocsCheckText runs toolc check on the broken contract that
// docs/cli.md shows ("Given this contract in weather/weather.cue"), put
// at line 10 of a service as examples/weather has it, and holds the text
// output that the page prints for it to what toolc check prints.
func TestDocsCheckText(t *testing.T) {
	d := docs(t)
	rest := d.MustAfter(t, "Given this contract in `weather/weather.cue`:\n")
	bs := doctext.Blocks("docs/cli.md", rest)
	if len(bs) < 2 || bs[0].Lang != "cue" {
		t.Fatal("the contract is not followed by a cue block and the output of toolc check")
	}
	want, ok := strings.CutPrefix(bs[1].Text, "$ toolc check ./...\n")
	if !ok {
		t.Fatalf("the block after the contract is not toolc check's output:\n%s", bs[1].Text)
	}
	// The service's first nine lines, as examples/weather/weather.cue
	// has them, put the contract's tools at line 10, where the output
	// says they are.
	header := strings.SplitAfterN(readFile(t, "../../examples/weather/weather.cue"), "\n", 10)[:9]
	dir := writeFiles(t, map[string]string{"weather/weather.cue": strings.Join(header, "") + bs[0].Text + "}\n"})
	r := toolc(t, dir, "check", "./...")
	if got := r.stdout + r.stderr; got != want {
		t.Errorf("toolc check ./... prints\n%s\ndocs/cli.md says\n%s", got, want)
	}
	if r.status != 1 {
		t.Errorf("toolc check ./... exits %d, want 1 for a contract with errors", r.status)
	}
}
