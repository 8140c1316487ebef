package rpc

import (
	"os"
	"strconv"
	"sync"
)

// pinFD pins the open file f as /proc/self/fd/N, which execve follows to
// the open file however its name has changed since: a rename over the
// name does not reach it. The file stays open until the process has
// started. Without /proc (a chroot, a container that does not mount it)
// it returns nil, and the caller makes a private copy.
func pinFD(f *os.File) *pinned {
	exe := "/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10)
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	if via, err := os.Stat(exe); err != nil || !os.SameFile(fi, via) {
		return nil
	}
	var once sync.Once
	return &pinned{exe: exe, release: func() { once.Do(func() { f.Close() }) }}
}
