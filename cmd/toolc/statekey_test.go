package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStateKey: serve and dev refuse a requestState key shorter than 32
// bytes, from --state-key-file or $TOOLC_STATE_KEY, before anything is
// compiled, and say how to make one; a good key passes on to the patterns.
func TestStateKey(t *testing.T) {
	dir := t.TempDir()
	short, good := filepath.Join(dir, "short.key"), filepath.Join(dir, "good.key")
	os.WriteFile(short, []byte("tiny\n"), 0o600)
	os.WriteFile(good, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	for _, cmd := range []string{"serve", "dev"} {
		for _, tt := range []struct {
			args []string
			env  string
			says string
		}{
			{[]string{"--state-key-file", short}, "TOOLC_STATE_KEY=", "has 4 bytes, fewer than 32"},
			{nil, "TOOLC_STATE_KEY=tiny", "$TOOLC_STATE_KEY has 4 bytes, fewer than 32"},
			{[]string{"--state-key-file", filepath.Join(dir, "missing.key")}, "TOOLC_STATE_KEY=", "no such file"},
		} {
			r := toolcRun(t, runOpts{dir: dir, env: []string{tt.env}}, append(append([]string{cmd}, tt.args...), "./nothing")...)
			wantStatus(t, r, exitUsage, cmd+" "+strings.Join(tt.args, " "))
			wantMatch(t, r.stderr, `^toolc `+cmd+`: the requestState key.*`+regexp.QuoteMeta(tt.says), cmd+"'s stderr")
		}
		r := toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_STATE_KEY="}}, cmd, "--state-key-file", good, "./nothing")
		if strings.Contains(r.stderr, "requestState") || !strings.Contains(r.stderr, "nothing") {
			t.Errorf("%s with a good key: %s", cmd, r.stderr)
		}
	}
}
