// Package atomicfile writes files so that a reader sees the old contents
// or the new, never half of them, and a failed write leaves the old file
// as it was: the data goes to a temporary file beside the target, which is
// then renamed over it.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to name with mode 0644. Errors are *fs.PathError
// values naming name, not the temporary file.
func Write(name string, data []byte) error {
	return WritePerm(name, data, 0o644)
}

// WritePerm is Write with the permission bits perm: a file that may hold
// secrets keeps the 0600 it had.
func WritePerm(name string, data []byte, perm fs.FileMode) error {
	if err := write(name, data, perm); err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: unwrap(err)}
	}
	return nil
}

func write(name string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// unwrap strips the path of the temporary file from an error, since the
// caller names the target.
func unwrap(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
