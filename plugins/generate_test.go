package plugins

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsFresh regenerates the protocol's Go code the way
// scripts/genproto does and compares it with the committed files. It needs
// protoc and the two pinned generators (scripts/genproto installs them),
// and skips without them.
func TestGeneratedCodeIsFresh(t *testing.T) {
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(strings.TrimSpace(string(gopath)), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	script, err := os.ReadFile("../scripts/genproto")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []struct{ name, version string }{
		{"protoc-gen-go", pinned(t, script, "PROTOC_GEN_GO_VERSION")},
		{"protoc-gen-go-grpc", strings.TrimPrefix(pinned(t, script, "PROTOC_GEN_GO_GRPC_VERSION"), "v")},
		{"protoc", ""},
	} {
		out, err := exec.Command(tool.name, "--version").Output()
		if err != nil || !strings.Contains(string(out), tool.version) {
			t.Skipf("%s %s is not installed; run scripts/genproto", tool.name, tool.version)
		}
	}

	dir := t.TempDir()
	cmd := exec.Command("protoc", "-I", "proto",
		"--go_out="+dir, "--go_opt=paths=source_relative",
		"--go-grpc_out="+dir, "--go-grpc_opt=paths=source_relative",
		"proto/toolc/plugin/v1/plugin.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	for _, name := range []string{"plugin.pb.go", "plugin_grpc.pb.go"} {
		rel := filepath.Join("toolc", "plugin", "v1", name)
		want, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("proto", rel))
		if err != nil {
			t.Fatal(err)
		}
		// protoc's own version is in the header; a different protoc
		// producing the same code is not staleness.
		if !bytes.Equal(dropProtocVersion(got), dropProtocVersion(want)) {
			t.Errorf("stale generated files: proto/%s differs from what plugin.proto generates; run scripts/genproto", rel)
		}
	}
}

func pinned(t *testing.T, script []byte, name string) string {
	for _, line := range strings.Split(string(script), "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return v
		}
	}
	t.Fatalf("scripts/genproto pins no %s", name)
	return ""
}

func dropProtocVersion(b []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("// \tprotoc ")) && !bytes.HasPrefix(line, []byte("// - protoc ")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
