// Command filesearch is the handler plugin of the file-search contract: it
// searches and reads the files under one directory, the search root.
//
// The root is $TOOLC_FILESEARCH_ROOT, or else the directory of the
// contract, which toolc gives every plugin as $TOOLC_SERVICE_DIR. It is
// never the working directory: an MCP client such as Claude Desktop starts
// toolc in /, and the model would see the whole file system. Every path
// is opened through an os.Root, so neither .. nor a symbolic link reaches
// a file outside it, and every result is bounded by the contract's limits.
package main

//go:generate go run ../../cmd/toolc gen go .

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
)

func main() {
	dir, err := searchRoot(os.Getenv)
	if err != nil {
		log.Fatalf("filesearch: %v", err)
	}
	s, err := newSearcher(dir)
	if err != nil {
		log.Fatalf("filesearch: the search root: %v", err)
	}
	log.Printf("filesearch: searching %s", dir)
	Serve(s)
}

// searchRoot returns the directory to search: $TOOLC_FILESEARCH_ROOT, or
// the contract's directory, $TOOLC_SERVICE_DIR. Without either (a host
// other than toolc) it refuses rather than fall back on the working
// directory.
func searchRoot(getenv func(string) string) (string, error) {
	if dir := getenv("TOOLC_FILESEARCH_ROOT"); dir != "" {
		return dir, nil
	}
	if dir := getenv("TOOLC_SERVICE_DIR"); dir != "" {
		return dir, nil
	}
	return "", errors.New("no search root: set TOOLC_FILESEARCH_ROOT to the directory whose files the tools may read")
}

// searcher serves the tools over one search root: its exported methods
// implement the contract's tools (Tools, in tools_gen.go), and an error
// they return is a tool error, for the model to read.
type searcher struct {
	root *os.Root
	fsys fs.FS // root's files, for fs.WalkDir
	now  func() time.Time
}

func newSearcher(dir string) (*searcher, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &searcher{root: root, fsys: root.FS(), now: time.Now}, nil
}

// open opens p under the root for reading without blocking: opening a
// named pipe blocks until something writes to it, in a system call that no
// context can cancel, so each call of read_file on one would hold a thread
// of the plugin for ever. O_NONBLOCK makes that open return at once; it
// changes nothing for a regular file, and the callers refuse anything else
// (regular) before they read.
func (s *searcher) open(p string) (*os.File, error) {
	return s.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// regular refuses what is not a regular file or a directory: a named pipe,
// a device or a socket, whose reads may block or never end (/dev/zero).
func regular(p string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() || m.IsDir() {
		return nil
	}
	kind := "a special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s, not a regular file; the tools read only regular files", p, kind)
}

// clean returns p, relative to the search root, in the form io/fs wants
// ("." for the root itself), or an error for a path that leaves the root.
// The contract's patterns already refuse absolute paths and backslashes;
// clean refuses them too, for callers without the runtime.
func clean(p string) (string, error) {
	if p == "" {
		p = "."
	}
	c := path.Clean(p)
	if path.IsAbs(p) || strings.Contains(p, `\`) || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q leaves the search root: give a path relative to it, without .. above it", p)
	}
	return c, nil
}

// explain turns a file system error into a message for the model, with
// the path as the caller gave it.
func explain(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist under the search root; list_directory shows what does", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s cannot be read: permission denied", p)
	case strings.Contains(err.Error(), "path escapes from parent"): // os.Root's error, not exported
		return fmt.Errorf("%s leads outside the search root, through a symbolic link", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", p, pe.Err)
	}
	return fmt.Errorf("%s: %v", p, err)
}
