package dev_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// TestBuildProgress: the first build says at once what it builds, and a
// build that runs longer than BuildProgress says each BuildProgress that it
// is still going, until it is over; a reload that builds nothing says
// neither.
func TestBuildProgress(t *testing.T) {
	dir := newProject(t)
	h := &harness{t: t, dir: dir, contract: filepath.Join(dir, "api", "svc.cue"), rt: runtime.New(runtime.Options{CallTimeout: wait}), status: &testsync.Buffer{}}
	d, err := dev.New(dev.Options{
		Dir: dir, Patterns: []string{"./..."}, Runtime: h.rt, Status: h.status,
		CacheDir: filepath.Join(t.TempDir(), "handlers"), Host: host.Options{Stderr: h.status},
		BuildProgress: 100 * time.Millisecond,
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
	out := h.expect(`toolc dev: reloaded in \S+: tools \+echo \+slow; compile \S+, build \S+ \(svc\)`)
	first := "toolc dev: building the handler of svc with go build; a first build on this machine also compiles every package it needs, which can take minutes\n"
	still := regexp.MustCompile(`toolc dev: still building the handler of svc \(\d+s so far\)\n`)
	if !strings.HasPrefix(out, first) {
		t.Errorf("the first build does not start by saying what it builds:\n%s", out)
	}
	// A build of a second or more (every build of a Go binary) is told.
	if !still.MatchString(out) {
		t.Errorf("no line says the build is still going:\n%s", out)
	}
	n := len(still.FindAllString(h.status.String(), -1))
	time.Sleep(300 * time.Millisecond)
	if again := len(still.FindAllString(h.status.String(), -1)); again != n {
		t.Errorf("%d more lines after the build was over", again-n)
	}

	h.write(h.contract, replace(t, readFile(t, h.contract), messageField, messageField+"\n\t\t\t\t"+suffixField))
	out = h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`)
	if strings.Contains(out, "building") {
		t.Errorf("a reload that built nothing talks of building:\n%s", out)
	}
}
