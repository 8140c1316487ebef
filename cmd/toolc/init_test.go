package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/toolc/toolc/scaffold"
)

// TestInit is a newcomer's first hour, done the way the README tells it:
// toolc init; the Next steps it prints, run as they stand with the real go
// command and module proxy; the README's CI recipe on the new project; a
// go build; and toolc dev answering a real MCP client. The toolc under
// test is on PATH, as go install would put it.
func TestInit(t *testing.T) {
	t.Setenv("PATH", filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("GOWORK", "off")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	r := toolc(t, parent, "init", "my-tools")
	if r.status != 0 {
		t.Fatalf("init = %d: %s", r.status, r.stderr)
	}
	dir := filepath.Join(parent, "my-tools")
	for _, f := range []string{"cue.mod/module.cue", "cue.mod/pkg/github.com/toolc/toolc/schema/schema.cue", "my_tools.cue", "main.go", "main_test.go", "go.mod", "tools_gen.go", "tools_gen_test.go"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("init did not write %s: %v", f, err)
		}
	}
	// This toolc is built from the checkout, whose version no proxy
	// serves: go.mod points at the checkout, and says v0.0.0, not a
	// pseudo-version with +dirty.
	mod := parseGoMod(t, filepath.Join(dir, "go.mod"))
	if len(mod.Require) != 1 || mod.Require[0].Mod.Version != "v0.0.0" ||
		len(mod.Replace) != 1 || mod.Replace[0].New.Path != root {
		t.Errorf("go.mod of a project made by a toolc built from %s:\n%s", root, readFile(t, filepath.Join(dir, "go.mod")))
	}

	// The README shows this output, from a checkout in /path/to/toolc.
	readme := docs(t).MustAfter(t, "```\n$ toolc init my-tools\n")
	readme, _, _ = strings.Cut(readme, "```")
	if want := strings.ReplaceAll(r.stdout, root, "/path/to/toolc"); readme != want {
		t.Errorf("README.md shows toolc init my-tools printing\n%s\nbut it prints\n%s", readme, want)
	}

	next := nextSteps(t, r.stdout)
	if want := []string{"cd my-tools", "go mod tidy", "toolc check ./...", "toolc dev ./..."}; strings.Join(next, "\n") != strings.Join(want, "\n") {
		t.Errorf("Next steps:\n%s\nwant:\n%s", strings.Join(next, "\n"), strings.Join(want, "\n"))
	}
	if next[len(next)-1] != "toolc dev ./..." {
		t.Fatalf("the last Next step is %q, not toolc dev", next[len(next)-1])
	}
	runSteps(t, parent, next[:len(next)-1])
	// go mod tidy leaves the go line alone: it is what toolc's own
	// requirements need, not less.
	if got := parseGoMod(t, filepath.Join(dir, "go.mod")).Go.Version; got != scaffold.GoVersion {
		t.Errorf("after go mod tidy, go.mod says go %s, want %s as init wrote it", got, scaffold.GoVersion)
	}

	t.Run("README CI recipe", func(t *testing.T) {
		gitT(t, dir, "init", "-q", "-b", "main")
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-q", "-m", "toolc init my-tools")
		gitT(t, dir, "update-ref", "refs/remotes/origin/main", "HEAD") // as a clone has it
		var recipe []string
		for _, step := range readmeCIRecipe(t) {
			if strings.HasPrefix(step, "cue ") {
				if _, err := exec.LookPath("cue"); err != nil {
					if os.Getenv("CI") != "" {
						t.Fatal("cue is not on PATH; scripts/test installs it")
					}
					t.Logf("skipping %q: cue is not on PATH", step)
					continue
				}
			}
			recipe = append(recipe, step)
		}
		t.Setenv("CUE_REGISTRY", "none")
		runSteps(t, dir, recipe)
	})

	t.Run("go generate, go build and go test", func(t *testing.T) {
		// go test runs the test init wrote beside echo, through the
		// compiled contract in tools_gen_test.go: no CUE, no toolc.
		runSteps(t, dir, []string{"go generate ./...", "go vet ./...", "go build ./...", "go test ./..."})
		if out := gitT(t, dir, "status", "--porcelain", "--untracked-files=no"); out != "" {
			t.Errorf("go generate changed the files of a new project:\n%s", out)
		}
	})

	t.Run("toolc dev", func(t *testing.T) {
		// toolc dev ./..., as printed, on a free port rather than 8931.
		s := startDev(t, dir)
		s.wantTools("my-tools_echo")
		s.wantCall("my-tools_echo", map[string]any{"message": "hi", "repeat": 2}, `{"text":"hi hi"}`)
		s.wantCall("my-tools_echo", map[string]any{"message": "hi"}, `{"text":"hi"}`)
	})

	t.Run("inside another module", func(t *testing.T) {
		app := writeFiles(t, map[string]string{"go.mod": "module example.com/app\n\ngo " + scaffold.GoVersion + "\n"})
		r := toolc(t, app, "init", "tools")
		if r.status != 0 {
			t.Fatalf("init = %d: %s", r.status, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(app, "tools", "go.mod")); err == nil {
			t.Error("init wrote a go.mod inside a module")
		}
		next := nextSteps(t, r.stdout)
		runSteps(t, app, append(next[:len(next)-1], "go build ./..."))
	})

	t.Run("--sdk", func(t *testing.T) {
		other := t.TempDir()
		r := toolc(t, other, "init", "--sdk", root, "svc")
		if r.status != 0 {
			t.Fatalf("init --sdk = %d: %s", r.status, r.stderr)
		}
		if mod := parseGoMod(t, filepath.Join(other, "svc", "go.mod")); len(mod.Replace) != 1 || mod.Replace[0].New.Path != root {
			t.Errorf("init --sdk %s wrote go.mod:\n%s", root, readFile(t, filepath.Join(other, "svc", "go.mod")))
		}
		r = toolc(t, other, "init", "--sdk", other, "svc2")
		if r.status != 2 || !strings.Contains(r.stderr, "--sdk "+other+": not a toolc checkout") {
			t.Errorf("init --sdk of a directory without toolc = %d %q, want 2 and why", r.status, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(other, "svc2")); err == nil {
			t.Error("init --sdk of a bad directory wrote files")
		}
	})

	t.Run("refuses to overwrite", func(t *testing.T) {
		contract := filepath.Join(dir, "my_tools.cue")
		if err := os.WriteFile(contract, []byte("package my_tools\n// edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := toolc(t, parent, "init", "my-tools")
		if r.status != 2 || !strings.Contains(r.stderr, "not overwriting") {
			t.Errorf("second init = %d %q, want 2 and a refusal", r.status, r.stderr)
		}
		if data, _ := os.ReadFile(contract); !strings.Contains(string(data), "// edited") {
			t.Error("second init overwrote the contract")
		}
	})

	t.Run("usage", func(t *testing.T) {
		if r := toolc(t, parent, "init"); r.status != 2 {
			t.Errorf("init without DIR = %d, want 2", r.status)
		}
	})
}

// nextSteps are the commands that init printed under "Next:", without
// their comments.
func nextSteps(t *testing.T, stdout string) []string {
	t.Helper()
	_, block, ok := strings.Cut(stdout, "\nNext:\n")
	if !ok {
		t.Fatalf("init printed no Next steps:\n%s", stdout)
	}
	var steps []string
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		cmd, _, _ := strings.Cut(strings.TrimPrefix(line, "\t"), "  #")
		steps = append(steps, strings.TrimSpace(cmd))
	}
	return steps
}

// readmeCIRecipe returns the commands of the README's "In CI" block.
func readmeCIRecipe(t *testing.T) []string {
	t.Helper()
	after := docs(t).MustSection(t, "In CI")
	_, block, ok := strings.Cut(after, "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no sh block under ## In CI")
	}
	comment := regexp.MustCompile(`\s+#.*$`)
	var steps []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		steps = append(steps, comment.ReplaceAllString(line, ""))
	}
	return steps
}

// runSteps runs the commands one after another in one shell started in
// dir, stopping at the first that fails, as a user pasting them would.
func runSteps(t *testing.T, dir string, steps []string) {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, s := range steps {
		script.WriteString("echo '$ '" + shellWord(s) + "\n" + s + "\n")
	}
	cmd := exec.Command("sh", "-c", script.String())
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the steps, run in %s: %v\n%s", dir, err, out)
	}
}

func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func parseGoMod(t *testing.T, path string) *modfile.File {
	t.Helper()
	mod, err := modfile.Parse(path, []byte(readFile(t, path)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}
