package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestExitStatus: the error a command returns decides the exit status,
// and run prints its message once, after "toolc COMMAND: ", cleaned.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		out    string
	}{
		{"no error", nil, exitOK, ""},
		{"-h", &exitError{status: exitOK}, exitOK, ""},
		{"a usage error", usagef("--format is required"), exitUsage, "toolc x: --format is required\n"},
		{"a contract error", failf("2 errors; nothing written"), exitFail, "toolc x: 2 errors; nothing written\n"},
		{"printed already", exitWith(exitFail), exitFail, ""},
		{"an I/O error", errors.New("open a.cue: permission denied"), exitUsage, "toolc x: open a.cue: permission denied\n"},
		{"wrapped", fmt.Errorf("at HEAD: %w", failf("breaks")), exitFail, "toolc x: at HEAD: breaks\n"},
		{"a usage line", &exitError{exitUsage, bareError("usage: toolc x DIR")}, exitUsage, "usage: toolc x DIR\n"},
		{"terminal controls", errors.New("a\x1b]52;c;eA==\x07.cue is a FIFO"), exitUsage, "toolc x: a\uFFFD]52;c;eA==\uFFFD.cue is a FIFO\n"},
	} {
		var out strings.Builder
		if status := exitStatus(&out, "x", tc.err); status != tc.status || out.String() != tc.out {
			t.Errorf("%s: status %d, printed %q; want %d, %q", tc.name, status, out.String(), tc.status, tc.out)
		}
	}
}
