//go:build unix

package validate

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system, which
// a benchmark divides by its iterations: on a busy machine it varies much
// less than the wall time, which counts the time spent waiting for a CPU.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
