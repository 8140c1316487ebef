//go:build !unix

package main

import "errors"

// mkfifo makes a FIFO where the system has them.
func mkfifo(string) error { return errors.ErrUnsupported }
