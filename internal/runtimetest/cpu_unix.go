//go:build unix

package runtimetest

import (
	"syscall"
	"testing"
	"time"
)

// SelfCPU is the CPU time this process has used, user and system, for the
// benchmarks that report CPU time beside wall time: the CPU time moves much
// less with the load of a shared machine than the wait for a CPU does.
func SelfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
