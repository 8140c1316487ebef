//go:build !unix

package upstream

import (
	"os"
	"os/exec"
)

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

func setProcAttr(*exec.Cmd) {}
