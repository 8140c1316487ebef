package rpc

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// canWaitWithoutReaping: waitid's WNOWAIT lets the runner see the exit and
// end the process group while the plugin's id still belongs to it.
const canWaitWithoutReaping = true

// setProcAttr puts the plugin in a process group of its own, which the
// host ends with it, and has the kernel SIGKILL it when the host dies,
// even by SIGKILL. (Strictly, the signal follows the death of the thread
// that forked; Go ends a thread only when a goroutine that locked it
// exits, which Start's goroutines never do.)
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited waits for the process to exit, leaving it to be reaped.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}
