//go:build !unix

package rpc

import (
	"io"
	"os/exec"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// Without Unix process groups, plugins run under go-plugin's own runner
// (see start): no group to end, no watchdog, and what a plugin writes to
// fd 1 after the handshake is dropped.
const haveRunner = false

type procRunner struct{}

func newRunner(*exec.Cmd, io.Writer, **procRunner) func(hclog.Logger, *exec.Cmd, string) (runner.Runner, error) {
	return nil
}

func (*procRunner) exitStatus(time.Duration) string { return "" }
func (*procRunner) lastWords(time.Duration) string  { return "" }
func (*procRunner) killGroup()                      {}
func (*procRunner) Pid() int                        { return 0 }
