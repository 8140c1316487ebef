package dev_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSwapPastGrace: a call in flight on a plugin that a rebuild replaced,
// and that outlasts the grace period, is told that, not that its handler
// crashed or is being restarted.
func TestSwapPastGrace(t *testing.T) {
	dir := newProject(t)
	h := startGrace(t, dir, 500*time.Millisecond)
	handler := readFile(t, h.handler)
	release := filepath.Join(t.TempDir(), "release")
	slow := h.callAsync("slow", map[string]string{"release": release})
	waitForFile(t, release+".started")

	h.write(h.handler, withVersion(t, handler, "v2"))
	h.expect(`toolc dev: reloaded in \S+: tools unchanged; handlers of svc rebuilt; `)
	select {
	case got := <-slow:
		want := `the handler of service "svc" was stopped before the call finished: a rebuilt handler replaced it, and the call ran past the grace period of 500ms`
		if !strings.Contains(got, want) || strings.Contains(got, "restart") {
			t.Errorf("the call past the grace period = %q, want it to say %q", got, want)
		}
	case <-time.After(wait):
		t.Fatal("the call past the grace period never returned")
	}
	h.wantCall("echo", map[string]string{"message": "hi"}, "v2:hi")
}
