//go:build unix && !linux

package rpc

import (
	"os/exec"
	"syscall"
)

// canWaitWithoutReaping is false where waitid's WNOWAIT is not at hand:
// the group is then ended just after the plugin is reaped.
const canWaitWithoutReaping = false

// setProcAttr puts the plugin in a process group of its own. There is no
// parent-death signal here: the watchdog ends the group when the host
// dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func waitExited(int) {}
