package dev_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/testmodule"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// TestLibraryEditRebuildsTheHandler: in a service whose handler (lib/plugin)
// serves a library beside the contract (lib/), an edit of the library
// rebuilds and restarts the handler, as an edit of the handler's own
// package does. The daemon used to watch the handler's directory alone.
func TestLibraryEditRebuildsTheHandler(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := testmodule.FromTxtar(t, root, filepath.Join("testdata", "library.txtar"))
	h := &harness{t: t, dir: dir, rt: runtime.New(runtime.Options{CallTimeout: wait}), status: &testsync.Buffer{}}
	d, err := dev.New(dev.Options{
		Dir:      dir,
		Patterns: []string{"./..."},
		Runtime:  h.rt,
		Status:   h.status,
		CacheDir: filepath.Join(t.TempDir(), "handlers"),
		Host:     host.Options{Stderr: h.status},
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
	h.expect(`toolc dev: reloaded in \S+: tools \+echo; compile \S+, build \S+ \(lib\), start \S+, swap \S+\n`)
	h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi")

	lib := filepath.Join(dir, "lib", "lib.go")
	h.write(lib, replace(t, readFile(t, lib), `const version = "v1"`, `const version = "v2"`))
	h.expect(`toolc dev: reloaded in \S+: tools unchanged; handlers of lib rebuilt; build \S+ \(lib\), start \S+, swap \S+\n`)
	h.wantCall("echo", map[string]string{"message": "hi"}, "v2:hi")
}
