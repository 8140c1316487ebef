package cli_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/cli"
)

// TestExitStatus: the error a command returns decides the exit status,
// and Status prints its message once, after "toolc COMMAND: ", cleaned.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		out    string
	}{
		{"no error", nil, cli.OK, ""},
		{"-h", &cli.Error{Status: cli.OK}, cli.OK, ""},
		{"a usage error", cli.Usagef("--format is required"), cli.Usage, "toolc x: --format is required\n"},
		{"a contract error", cli.Failf("2 errors; nothing written"), cli.Fail, "toolc x: 2 errors; nothing written\n"},
		{"printed already", cli.Exit(cli.Fail), cli.Fail, ""},
		{"an I/O error", errors.New("open a.cue: permission denied"), cli.Usage, "toolc x: open a.cue: permission denied\n"},
		{"wrapped", fmt.Errorf("at HEAD: %w", cli.Failf("breaks")), cli.Fail, "toolc x: at HEAD: breaks\n"},
		{"a usage line", &cli.Error{Status: cli.Usage, Err: cli.Bare("usage: toolc x DIR")}, cli.Usage, "usage: toolc x DIR\n"},
		{"terminal controls", errors.New("a\x1b]52;c;eA==\x07.cue is a FIFO"), cli.Usage, "toolc x: a\uFFFD]52;c;eA==\uFFFD.cue is a FIFO\n"},
	} {
		var out strings.Builder
		if status := cli.Status(&out, "toolc x", tc.err); status != tc.status || out.String() != tc.out {
			t.Errorf("%s: status %d, printed %q; want %d, %q", tc.name, status, out.String(), tc.status, tc.out)
		}
	}
}
