//go:build !unix

package inputfile

import "errors"

// mkfifo makes a FIFO where the system has them.
func mkfifo(string) error { return errors.ErrUnsupported }
