package main

import (
	"strings"
	"testing"
)

// TestServeSSEPollFlags: --sse-poll-after resumes the streams of sessions,
// so with --stateless, which has none, serve and dev exit 2 and say so,
// before anything is compiled or built. (runtime's TestSSEPolling and
// scripts/conformance's server-sse-polling test what the flag does.)
func TestServeSSEPollFlags(t *testing.T) {
	t.Setenv("TOOLC_TOKEN", "")
	for _, cmd := range []string{"serve", "dev"} {
		r := toolc(t, "../..", cmd, "--stateless", "--sse-poll-after", "1s", "./examples/weather")
		if want := "--sse-poll-after resumes the streams of sessions, and --stateless serves none"; r.status != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("toolc %s --stateless --sse-poll-after 1s: exit %d, stderr %q; want exit 2 saying %q", cmd, r.status, r.stderr, want)
		}
	}
}
