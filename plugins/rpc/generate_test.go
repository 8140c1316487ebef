package rpc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsFresh runs the //go:generate command of rpc.go,
// into a temporary directory, and compares its output with the committed
// files. The command needs nothing but Go and the module proxy (buf,
// protoc-gen-go and protoc-gen-go-grpc run with go tool at the versions
// that go.mod and tools/buf.mod pin), so the test runs everywhere; the
// first run builds buf, which takes a minute.
func TestGeneratedCodeIsFresh(t *testing.T) {
	args := generateCommand(t)
	dir := t.TempDir()
	cmd := exec.Command(args[0], append(args[1:], "-o", dir)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	for _, name := range []string{"plugin.pb.go", "plugin_grpc.pb.go"} {
		rel := filepath.Join("toolc", "plugin", "v1", name)
		want, err := os.ReadFile(filepath.Join(dir, "plugins", "proto", rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "proto", rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("stale generated files: plugins/proto/%s differs from what plugin.proto generates; run go generate ./plugins/rpc", rel)
		}
	}
}

// TestGenprotoScriptRunsTheGenerateCommand keeps scripts/genproto and the
// //go:generate line from drifting apart.
func TestGenprotoScriptRunsTheGenerateCommand(t *testing.T) {
	args := generateCommand(t)
	script, err := os.ReadFile("../../scripts/genproto")
	if err != nil {
		t.Fatal(err)
	}
	// go:generate runs in plugins/rpc/ and changes to the root with -C; the
	// script changes to the root itself.
	want := "exec go " + strings.Join(args[3:], " ") + ` "$@"`
	if !strings.Contains(string(script), want) {
		t.Errorf("scripts/genproto does not run %q, the command of the //go:generate line", want)
	}
	if bytes.Contains(script, []byte("apt-get")) || bytes.Contains(script, []byte("go install")) {
		t.Error("scripts/genproto installs something; the go tool directives should be all it needs")
	}
}

// generateCommand returns the words of rpc.go's //go:generate line.
func generateCommand(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("rpc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args := strings.Fields(rest)
			if len(args) < 4 || args[0] != "go" || args[1] != "-C" || args[2] != "../.." {
				t.Fatalf("rpc.go: unexpected //go:generate line %q", line)
			}
			return args
		}
	}
	t.Fatal("rpc.go has no //go:generate line")
	return nil
}

// TestGoGenerateNeedsOnlyGo: every //go:generate line in the repository
// runs the go command, so that go generate ./... needs nothing installed
// (no protoc, no toolc on PATH). go generate reads lines, so a directive
// inside a string literal counts too.
func TestGoGenerateNeedsOnlyGo(t *testing.T) {
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if rest, ok := strings.CutPrefix(line, "//go:generate "); ok && !strings.HasPrefix(rest, "go ") {
				t.Errorf("%s:%d: go generate ./... would run %q, which is not the go command", path, i+1, rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
