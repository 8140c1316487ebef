//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
)

// killGroup kills the process group that pid leads: the server and what
// it started (npx starts node, which may start more).
func killGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
}

// setProcAttr puts the server in a process group of its own (see
// killGroup), and on Linux has the kernel kill it when toolc dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}
