// Package testmodule writes, for tests, a Go module in a temporary
// directory that requires toolc through a replace directive pointing at
// this checkout, as the project of a user of an unreleased toolc would.
package testmodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// FromTxtar writes the files of the txtar archive into a temporary
// directory, with @ROOT@ in them replaced by root, the checkout. It copies
// the checkout's go.sum and runs go mod tidy, so that go.mod and go.sum
// are complete and no later build changes them.
func FromTxtar(t testing.TB, root, archive string) string {
	t.Helper()
	ar, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		write(t, filepath.Join(dir, f.Name), strings.ReplaceAll(string(f.Data), "@ROOT@", root))
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), string(sum))
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return dir
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
