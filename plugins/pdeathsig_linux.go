package plugins

import (
	"os/exec"
	"syscall"
)

// setPdeathsig has the kernel SIGKILL the plugin when the host dies, even
// by SIGKILL, so that no plugin outlives its host. (Strictly, the signal
// follows the death of the thread that forked; Go ends a thread only when a
// goroutine that locked it exits, which Start's goroutines never do.)
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
