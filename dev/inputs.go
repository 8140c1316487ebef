package dev

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolc/toolc/watch"
)

// buildEnv are the environment variables that change what `go build`
// makes of the same sources.
var buildEnv = []string{"GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOEXPERIMENT", "GOWORK", "GOTOOLCHAIN", "CC", "CGO_CFLAGS", "CGO_LDFLAGS"}

// inputsHash hashes what a build of the handler package pkg reads, as far
// as the daemon watches it: every file under pkg that the watcher does not
// ignore, except tests; the go.mod, go.sum and go.work that govern it; and
// the build's environment. It is "" when a file cannot be read, so that
// nothing is skipped on a guess.
//
// It is the file set, not `go list -deps`, because the daemon rebuilds a
// handler when a file under its directory changes, and only then: the
// hash must cover exactly what can trigger a rebuild, and costs no go
// command run. A local package imported from outside the directory is
// not watched, and so not hashed either, except the contract's directory
// when it holds the handler and Go code of its own (see handlerTree).
func (d *Daemon) inputsHash(pkg string) string {
	h := sha256.New()
	root, err := filepath.EvalSymlinks(pkg)
	if err != nil {
		return ""
	}
	add := func(name, path string) error {
		f, err := os.Open(path)
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
