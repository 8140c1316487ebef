package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/doctext"
)

// TestOwnModule follows the README's "In a module of your own", running
// its commands as they stand (with /path/to/toolc this checkout) and
// writing the files it names, with the three changes it names: a new
// module outside this repository, built by go generate, go mod tidy and
// go build with toolc on PATH, as a user builds it. The service links no
// plugin protocol there either.
func TestOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolc and a module of its own")
	}
	section := doctext.Read(t).MustAfter(t, "**In a module of your own.**")
	section, _, _ = strings.Cut(section, "\n## ")
	section, _, _ = strings.Cut(section, "`examples/embed/service_test.go`")
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 2 {
		t.Fatalf("README.md's In a module of your own has %d go blocks, want the generate lines and plugin/main.go", len(blocks))
	}
	generate, plugin := blocks[0][1], blocks[1][1]
	scripts := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(scripts) != 2 {
		t.Fatalf("README.md's In a module of your own has %d sh blocks, want the module's making and its build", len(scripts))
	}
	module, build := scripts[0][1], scripts[1][1]
	modPath := regexp.MustCompile(`go mod init (\S+)`).FindStringSubmatch(module)
	if modPath == nil {
		t.Fatal("the README's module is made without go mod init")
	}

	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "toolc"), "../../cmd/toolc").CombinedOutput(); err != nil {
		t.Fatalf("go build toolc: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOWORK=off")
	sh := func(dir, script string) {
		t.Helper()
		cmd := exec.Command("sh", "-e", "-x", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the README's commands, in %s: %v\n%s", dir, err, out)
		}
	}
	parent := t.TempDir()
	sh(parent, strings.ReplaceAll(module, "/path/to/toolc", repo))
	dir := filepath.Join(parent, "notesd")

	mainGo := read(t, "main.go")
	for old, new := range map[string]string{
		"//go:generate go run ../../cmd/toolc gen go ./notes\n//go:generate go run -C ../.. ./cmd/toolc build -o examples/embed/toolc.catalog.json ./examples/embed/notes\n": generate,
		`"github.com/toolc/toolc/examples/embed/notes"`: `"` + modPath[1] + `/notes"`,
	} {
		if !strings.Contains(mainGo, old) {
			t.Fatalf("examples/embed/main.go no longer has %q, which the README says to change", old)
		}
		mainGo = strings.Replace(mainGo, old, new, 1)
	}
	if !strings.Contains(section, "`\""+modPath[1]+"/notes\"`") {
		t.Errorf("the README does not say to import %s/notes, the package of its module", modPath[1])
	}
	for name, content := range map[string]string{
		"main.go":              mainGo,
		"notes/notes.cue":      read(t, "notes/notes.cue"),
		"notes/notes.go":       read(t, "notes/notes.go"),
		"notes/plugin/main.go": plugin,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(dir, build)
	binary := filepath.Join(dir, path.Base(modPath[1]))
	if fi, err := os.Stat(binary); err != nil || fi.IsDir() {
		t.Fatalf("go build . made no binary %s: %v", binary, err)
	}
	for _, step := range [][]string{{"go", "vet", "./..."}, {"go", "version", "-m", binary}} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
		if step[1] == "version" && (strings.Contains(string(out), "hashicorp/go-plugin") || strings.Contains(string(out), "google.golang.org/grpc")) {
			t.Errorf("the service built in its own module links the plugin protocol:\n%s", out)
		}
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
