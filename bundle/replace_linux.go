package bundle

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// replace puts the directory tmp in dir's place. An existing dir is
// swapped with tmp in one step (renameat2's RENAME_EXCHANGE), so that
// whoever reads dir sees the old bundle or the new, and then removed.
func replace(tmp, dir string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return os.RemoveAll(tmp) // the old bundle, now at tmp
	case errors.Is(err, unix.ENOENT):
		return os.Rename(tmp, dir) // no dir yet
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return replaceInTwo(tmp, dir) // a file system or kernel without the exchange
	}
	return &os.LinkError{Op: "rename", Old: tmp, New: dir, Err: err}
}
