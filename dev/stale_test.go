package dev_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/gogen"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/scaffold"
)

// TestStaleGeneratedCode: on a project from toolc init, whose handler
// implements the generated Tools, a contract edit without toolc gen go
// goes live, and toolc dev says which generated files no longer match the
// contract and the command that fixes them, as toolc gen go --check
// would; once regenerated, an edit that keeps them matching says nothing.
// A service that uses no generated code is never told (TestDaemon's
// project has none).
func TestStaleGeneratedCode(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "my-tools")
	if _, err := scaffold.Init(dir, scaffold.SDK{Version: "v0.0.0", Dir: root}); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir, tidy.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}

	h := &harness{t: t, dir: dir, rt: runtime.New(runtime.Options{CallTimeout: wait}), status: &testsync.Buffer{}}
	d, err := dev.New(dev.Options{
		Dir: dir, Patterns: []string{"./..."}, Runtime: h.rt, Status: h.status,
		CacheDir: filepath.Join(t.TempDir(), "handlers"), Host: host.Options{Stderr: h.status},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	ctx, cancel := context.WithCancel(context.Background())
	if err := d.Start(ctx); err != nil {
		cancel()
		t.Fatalf("Start: %v\n%s", err, h.status)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		rpc.CleanupClients()
		if t.Failed() {
			t.Logf("status output:\n%s", h.status)
		}
	})
	h.expect(`toolc dev: reloaded in \S+: tools \+echo; compile \S+, build \S+ \(my-tools\), start \S+, swap \S+\n`)
	if out := h.status.String(); strings.Contains(out, "generated Go code") {
		t.Fatalf("a new project's generated code is current, but dev says otherwise:\n%s", out)
	}

	contract := filepath.Join(dir, "my_tools.cue")
	h.write(contract, replace(t, readFile(t, contract), `description: "Echo a message back, to check that the tools are wired up"`, `description: "Echo a message back"`))
	out := h.expect(`(?s)reloaded in .*toolc dev: the generated Go code of my-tools does not match its contract: tools_gen.go \(out of date\), tools_gen_test.go \(out of date\);.* run toolc gen go \.\n`)
	if strings.Count(out, "generated Go code") != 1 {
		t.Errorf("said more than once:\n%s", out)
	}

	// toolc gen go, as it says: the handler is rebuilt, and nothing more
	// is said.
	h.step()
	writeGenerated(t, dir, readFile(t, contract))
	h.settle("the regenerated handler", func() bool { return strings.Contains(h.status.String()[h.mark:], "reloaded in") })

	// A contract edit that comes with its generated code: nothing to say.
	next := replace(t, readFile(t, contract), `version:     "0.1.0"`, `version:     "0.2.0"`)
	h.step()
	writeGenerated(t, dir, next)
	h.settle("the handler of 0.2.0", func() bool { return strings.Contains(h.status.String()[h.mark:], "reloaded in") })
	h.write(contract, next)
	h.expect(`reloaded in \S+: tools unchanged; compile`)
	h.settle("the contract of 0.2.0", func() bool { return true })
	if out := h.status.String()[h.mark:]; strings.Contains(out, "generated Go code") {
		t.Errorf("dev says the regenerated code is stale:\n%s", out)
	}
}

// writeGenerated writes into dir what toolc gen go writes for the project
// with contract as its my_tools.cue, compiled in a copy, so that the
// daemon sees the generated files before the contract.
func writeGenerated(t *testing.T, dir, contract string) {
	t.Helper()
	cp := t.TempDir()
	if err := os.CopyFS(filepath.Join(cp, "cue.mod"), os.DirFS(filepath.Join(dir, "cue.mod"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cp, "my_tools.cue"), contract)
	res, err := compiler.Compile(compiler.Config{Dir: cp}, ".")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	files, err := gogen.Files(res.Catalog.Services[0], dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		writeFile(t, filepath.Join(dir, f.Path), string(f.Source))
	}
}
