package procsec

import "golang.org/x/sys/unix"

func seal() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// sealed reports whether the process is sealed, for the tests.
func sealed() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return v == 0, err
}
