//go:build !linux

package plugins

import "os/exec"

// setPdeathsig does nothing where the kernel has no parent-death signal;
// go-plugin's Managed cleanup still stops plugins on an orderly exit.
func setPdeathsig(*exec.Cmd) {}
