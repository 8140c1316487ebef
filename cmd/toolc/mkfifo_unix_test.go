//go:build unix

package main

import "syscall"

// mkfifo makes a FIFO, for the tests of reads that must not block on one.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
