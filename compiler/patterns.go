package compiler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolc/toolc/internal/inputfile"
)

// A match is a directory named by a pattern. Explicit directories are
// contracts by definition; directories found under a wildcard are contracts
// only if a package in them imports the schema, so that `./...` passes
// over unrelated CUE packages the way `go vet ./...` passes over packages
// without tests.
type match struct {
	dir      string // absolute
	explicit bool
}

// expandPatterns resolves Go-style patterns ("./...", "./examples/weather",
// "dir/...") relative to wd. A pattern that names no directory with .cue
// files is an error, as is a .cue file that cannot be read.
func expandPatterns(wd string, patterns []string) ([]match, error) {
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	var out []match
	seen := map[string]int{}
	add := func(m match) {
		if i, ok := seen[m.dir]; ok {
			out[i].explicit = out[i].explicit || m.explicit
			return
		}
		seen[m.dir] = len(out)
		out = append(out, m)
	}
	for _, pat := range patterns {
		base, wild := strings.CutSuffix(filepath.ToSlash(pat), "...")
		if wild && base != "" && !strings.HasSuffix(base, "/") {
			return nil, fmt.Errorf("pattern %q: a wildcard must follow a slash, as in ./...", pat)
		}
		if base == "" {
			base = "."
		}
		dir := filepath.FromSlash(base)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
		dir = filepath.Clean(dir)
		if strings.HasSuffix(dir, ".cue") && !wild {
			if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
				dir = filepath.Dir(dir) // a file names its package
			}
		}
		fi, err := os.Stat(dir)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the pattern names the path already
			}
			return nil, fmt.Errorf("pattern %q: %w", pat, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("pattern %q: %s is not a directory", pat, base)
		}
		if !wild {
			ok, err := hasCUEFiles(dir)
			if err != nil {
				return nil, relError(wd, err)
			}
			if !ok {
				return nil, fmt.Errorf("pattern %q: no .cue files in %s", pat, base)
			}
			add(match{dir: dir, explicit: true})
			continue
		}
		n := len(out)
		// A pattern's own base is followed when it is a symlink, as `go
		// list ./link/...` follows it: the user named it. Symlinks below
		// it are passed over, as the go command passes over them. The
		// walk starts at "dir/" so that WalkDir resolves the link.
		root := dir
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			root = dir + string(filepath.Separator)
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			path = filepath.Clean(path)
			if path != dir && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			ok, err := hasCUEFiles(path)
			if err != nil {
				return err
			}
			if ok {
				add(match{dir: path})
			}
			return nil
		})
		if err != nil {
			return nil, relError(wd, err)
		}
		if len(out) == n && !slices.ContainsFunc(out, func(m match) bool { return within(dir, m.dir) }) {
			return nil, fmt.Errorf("pattern %q: matched no CUE packages", pat)
		}
	}
	return out, nil
}

// skipDir reports whether a wildcard walk passes over a directory, as the
// go command does: hidden directories, testdata, and dependency or build
// directories.
func skipDir(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	switch name {
	case "testdata", "cue.mod", "node_modules", "vendor":
		return true
	}
	return false
}

// hasCUEFiles reports whether dir holds .cue files, and fails if one of
// them cannot be read: an unreadable file is an I/O problem, not a finding.
// So is a .cue file that is no regular file (a FIFO would block the CUE
// loader for ever, /dev/zero fill memory) or that is over inputfile's
// limit.
func hasCUEFiles(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	found := false
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		if err := inputfile.Check(filepath.Join(dir, e.Name())); err != nil {
			return false, err
		}
		found = true
	}
	return found, nil
}

// relError shortens the path in an I/O error to one relative to wd, as
// diagnostics show paths: "open /abs/x.cue: permission denied" becomes
// "x.cue: permission denied".
func relError(wd string, err error) error {
	var pe *fs.PathError
	var notRegular *inputfile.NotRegularError
	var tooLarge *inputfile.TooLargeError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", relPath(wd, pe.Path), pe.Err)
	case errors.As(err, &notRegular):
		notRegular.Name = relPath(wd, notRegular.Name)
	case errors.As(err, &tooLarge):
		tooLarge.Name = relPath(wd, tooLarge.Name)
	}
	return err
}
