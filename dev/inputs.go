package dev

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/watch"
)

// buildEnv are the environment variables that change what `go build`
// makes of the same sources.
var buildEnv = []string{"GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOEXPERIMENT", "GOWORK", "GOTOOLCHAIN", "CC", "CGO_CFLAGS", "CGO_LDFLAGS"}

// inputs are the hashes of what a build of a handler reads, as far as the
// daemon watches it, by part: "." is the handler's tree, the module files
// that govern it and the build's environment (see treeHash); "dir:D" the
// files directly in D, the directory of a local package that the handler
// imports from outside its tree, and "mod:F" the go.mod F of a local
// module (see localDeps). A part is "" when it could not be read, so that
// nothing is skipped on a guess.
//
// The parts are the files whose change the daemon reloads on, and only
// those: the handler's tree, and the local packages that the last `go
// list -deps` of the handler named. The module cache and GOROOT are not
// hashed; their content does not change under a version that go.mod and
// go.sum pin. Each part is kept apart so that, when a build brings a
// package in, the inputs of the running build can take it in as it is
// then (see Daemon.takeDeps) without hashing the rest again.
type inputs map[string]string

// sum is the hash of all the parts, "" if any is "".
func (in inputs) sum() string {
	if in == nil {
		return ""
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if in[k] == "" {
			return ""
		}
		io.WriteString(h, k+"\x00"+in[k]+"\x00")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// inputsOf hashes the inputs of a build of the handler package pkg that
// imports deps (nil before its first listing).
func (d *Daemon) inputsOf(pkg string, deps *localDeps) inputs {
	in := inputs{".": d.treeHash(pkg)}
	for _, part := range deps.parts() {
		in[part], _ = hashPart(part)
	}
	return in
}

// absent is the hash of a part that does not exist: a package deleted, or
// not made yet, hashes the same until it appears.
const absent = "absent"

// hashPart hashes one part of the inputs other than ".", and says when
// its newest file was last modified.
func hashPart(part string) (string, time.Time) {
	if f, ok := strings.CutPrefix(part, "mod:"); ok {
		return hashFiles([]string{f})
	}
	dir := strings.TrimPrefix(part, "dir:")
	// Resolved first, so that a symlink loop is an error here rather
	// than a walk: the files directly in dir are read, and symlinks among
	// them are not followed, as the watcher does not follow them.
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return absent, time.Time{}
	} else if err != nil {
		return "", time.Time{}
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return "", time.Time{}
	}
	var files []string
	for _, e := range entries {
		path := filepath.Join(real, e.Name())
		if e.Type().IsRegular() && !watch.Ignored(path, false) && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
	}
	return hashFiles(files)
}

// hashFiles hashes files by base name and content; a file that does not
// exist is hashed as such.
func hashFiles(files []string) (string, time.Time) {
	h := sha256.New()
	var newest time.Time
	for _, path := range files {
		// Opened as toolc opens its input: a FIFO or a device in a
		// file's place is an error here (the part is "", rebuilt each
		// time), where os.Open would block on the FIFO and io.Copy never
		// end on /dev/zero.
		f, _, err := inputfile.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			io.WriteString(h, filepath.Base(path)+"\x00"+absent+"\x00")
			continue
		} else if err != nil {
			return "", time.Time{}
		}
		fi, err := f.Stat()
		if err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		io.WriteString(h, filepath.Base(path)+"\x00")
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", time.Time{}
		}
		io.WriteString(h, "\x00")
	}
	return hex.EncodeToString(h.Sum(nil)), newest
}

// treeHash hashes what a build of the handler package pkg reads from its
// own tree: every file under pkg that the watcher does not ignore, except
// tests; the go.mod, go.sum and go.work that govern it; and the build's
// environment. It is "" when a file cannot be read.
func (d *Daemon) treeHash(pkg string) string {

	h := sha256.New()
	root, err := filepath.EvalSymlinks(pkg)
	if err != nil {
		return ""
	}
	add := func(name, path string) error {
		f, _, err := inputfile.Open(path) // never a FIFO's or a device's open
		if err != nil {
			return err
		}
		defer f.Close()
		io.WriteString(h, name+"\x00")
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		io.WriteString(h, "\x00")
		return nil
	}
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && (watch.Ignored(path, e.IsDir()) || e.IsDir() && within(d.opts.CacheDir, path)) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		return add(filepath.ToSlash(rel), path)
	})
	if err != nil {
		return ""
	}
	// The module files: go.mod and go.sum of the module holding pkg, and
	// the go.work above it, as the go command finds them.
	mod, work := false, false
	for dir := root; ; dir = filepath.Dir(dir) {
		for _, name := range []string{"go.mod", "go.sum", "go.work", "go.work.sum"} {
			if mod && !strings.HasPrefix(name, "go.work") || work && strings.HasPrefix(name, "go.work") {
				continue
			}
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			if err := add(path, path); err != nil {
				return ""
			}
		}
		mod = mod || exists(filepath.Join(dir, "go.mod"))
		work = work || exists(filepath.Join(dir, "go.work"))
		if filepath.Dir(dir) == dir {
			break
		}
	}
	for _, k := range buildEnv {
		io.WriteString(h, k+"="+os.Getenv(k)+"\x00")
	}
	return hex.EncodeToString(h.Sum(nil))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
