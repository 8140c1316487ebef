// Package inputfile reads what toolc takes as input whole (catalogs, lock
// files, the files diff compares with, module files, a call's arguments
// on standard input) within one size limit, and files only when they are
// regular files.
//
// A name can lead anywhere: --catalog /dev/zero, a toolc.lock that links
// to /dev/zero, a FIFO that nothing writes to. Reading such a thing whole
// grows memory until the machine runs out, or blocks for ever (and a
// blocked open(2) ignores SIGTERM's context). ReadFile stats the name
// before it opens it, so that a device or a FIFO is never opened; opens it
// with O_NONBLOCK, so that one swapped in between cannot block; checks the
// open file again; and reads at most the limit.
//
// The limit is DefaultLimit, 64 MiB, unless $TOOLC_MAX_INPUT sets another:
// a number of bytes, or one with a unit (KiB, MiB, GiB, or K, M, G).
package inputfile

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// DefaultLimit bounds an input when $TOOLC_MAX_INPUT does not: far more
// than a catalog of thousands of tools needs.
const DefaultLimit = 64 << 20

// EnvVar names the environment variable that sets the limit.
const EnvVar = "TOOLC_MAX_INPUT"

// TooLargeError is an input over the limit.
type TooLargeError struct {
	Name  string // the file, or what the stream is ("standard input")
	Limit int64
	// Fixed is a limit of the file's own kind (ReadFileMax), which
	// $TOOLC_MAX_INPUT does not raise.
	Fixed bool
}

func (e *TooLargeError) Error() string {
	if e.Fixed {
		return fmt.Sprintf("%s is over the %s that such a file may hold", e.Name, FormatSize(e.Limit))
	}
	return fmt.Sprintf("%s is over the %s limit on input (set %s to raise it, as in %s=%s)",
		e.Name, FormatSize(e.Limit), EnvVar, EnvVar, FormatSize(4*e.Limit))
}

// NotRegularError is a name that is not a regular file.
type NotRegularError struct {
	Name string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; toolc reads its input files only from regular files", e.Name, kind(e.Mode))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// Limit returns the limit on an input: $TOOLC_MAX_INPUT, or DefaultLimit.
func Limit() (int64, error) {
	s := strings.TrimSpace(os.Getenv(EnvVar))
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("$%s: %v", EnvVar, err)
	}
	return n, nil
}

// ParseSize reads a size: bytes, or a number with a unit of KiB, MiB or
// GiB (K, M and G mean the same).
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: give a positive number of bytes, or one with a unit, such as 256MiB", s)
	}
	return n * mult, nil
}

// FormatSize writes n as ParseSize reads it, in the largest unit that
// divides it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// ReadFile reads the regular file name whole, within the limit. Errors
// name the file: a *NotRegularError, a *TooLargeError, or the os
// package's (fs.ErrNotExist for a missing file).
func ReadFile(name string) ([]byte, error) {
	limit, err := Limit()
	if err != nil {
		return nil, err
	}
	return readFile(name, limit, false)
}

// ReadFileMax is ReadFile with a limit of the file's own kind, for files
// that are small by nature (a key): a larger one is a mistake, whatever
// $TOOLC_MAX_INPUT says.
func ReadFileMax(name string, limit int64) ([]byte, error) {
	return readFile(name, limit, true)
}

func readFile(name string, limit int64, fixed bool) ([]byte, error) {
	f, fi, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &TooLargeError{name, limit, fixed}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew, or it is a file of /proc
		return nil, &TooLargeError{name, limit, fixed}
	}
	return data, nil
}

// Open opens the regular file name for reading, and never blocks on, or
// opens, anything else: the name is checked before it is opened, and the
// open file again after. The file is in blocking mode as usual.
func Open(name string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{name, fi.Mode()}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &NotRegularError{name, fi.Mode()}
		}
		return nil, nil, err
	}
	return f, fi, nil
}

// GoBuildOpen is Open in the shape of go/build's Context.OpenFile, for
// the readers of Go package clauses (the handler rule, toolc gen go, the
// host's check of a handler): go/build opens every .go file of a
// directory, so a FIFO named x.go would block it for ever.
func GoBuildOpen(name string) (io.ReadCloser, error) {
	f, _, err := Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Check reports whether name is a regular file within the limit that can
// be opened for reading, without reading it: for files that another
// package reads afterwards, such as the CUE loader.
func Check(name string) error {
	limit, err := Limit()
	if err != nil {
		return err
	}
	f, fi, err := Open(name)
	if err != nil {
		return err
	}
	f.Close()
	if fi.Size() > limit {
		return &TooLargeError{Name: name, Limit: limit}
	}
	return nil
}

// ReadAll reads r whole, within the limit; what names r in the error
// ("standard input").
func ReadAll(r io.Reader, what string) ([]byte, error) {
	limit, err := Limit()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: what, Limit: limit}
	}
	return data, nil
}

// ReadJSONArgs reads the JSON arguments of a call (toolc call's) from
// stdin, within the limit: {} when stdin is a terminal, which no one is
// typing arguments into, or when it holds nothing but space.
func ReadJSONArgs(stdin io.Reader) ([]byte, error) {
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return []byte("{}"), nil
		}
	}
	data, err := ReadAll(stdin, "standard input")
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("{}"), nil
	}
	return data, nil
}
