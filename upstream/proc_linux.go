package upstream

import "syscall"

// setDeathSignal has the kernel SIGKILL the server when the thread that
// started it, and so toolc, dies, even by SIGKILL.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
