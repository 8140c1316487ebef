// Package baseline reads what toolc diff compares the contracts with, as a
// lock: toolc.lock by default, a lock file or a catalog file that toolc
// build wrote, or the contracts as they were at a git revision, compiled
// from a copy of the revision's tree (internal/revtree).
//
//	b, err := baseline.Load(ctx, against, patterns)
//	changes := compiler.Diff(res, b.Lock)
//
// Load returns what it left out of the comparison as Notes, for the
// caller to show; it prints nothing.
package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/lock"

	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/revtree"
)

// Baseline is the lock that the contracts are compared with.
type Baseline struct {
	Lock *lock.Lock
	// Label names it in messages: toolc.lock, a file's name, or a
	// revision with its commit, "main (0123456789ab)".
	Label string
	// Notes say, one sentence each, what the comparison leaves out or
	// takes as new: files of the revision that were not written, packages
	// with errors at the revision, a revision without the contracts.
	Notes []string
}

// Load reads the baseline that against names: "" is lock.FileName in the
// working directory; a name that is a file is a lock or a catalog file,
// by its format; any other name is a git revision of the repository that
// holds the working directory, whose contracts the patterns select, as
// they select the current ones. An error says what against is, when it is
// neither a file nor a revision.
func Load(ctx context.Context, against string, patterns []string) (*Baseline, error) {
	if against == "" {
		l, err := lock.LoadFile(lock.FileName)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no %s here: record the contracts with toolc lock, or compare with --against FILE|GIT-REF", lock.FileName)
		}
		if err != nil {
			return nil, err
		}
		return &Baseline{Lock: l, Label: lock.FileName}, nil
	}
	if fi, err := os.Stat(against); err == nil && !fi.IsDir() {
		l, err := loadFile(against)
		if err != nil {
			return nil, err
		}
		return &Baseline{Lock: l, Label: against}, nil
	}
	// Not a file to read: a git revision, unless git says it is none.
	// A directory may share its name with a branch, so it is tried too.
	b, err := atRevision(ctx, against, patterns)
	if err != nil {
		wd, _ := os.Getwd()
		what := describe(against)
		switch {
		case errors.Is(err, revtree.ErrNoGit):
			err = fmt.Errorf("%s, and git, which would read it as a revision, is not installed", what)
		case errors.Is(err, revtree.ErrNotRepository):
			err = fmt.Errorf("%s, and %s is not in a git repository, so it is not a revision either", what, wd)
		case errors.Is(err, revtree.ErrNoRevision):
			err = fmt.Errorf("%s, and no such git revision", what)
		}
		return nil, fmt.Errorf("--against %s: %w", against, err)
	}
	return b, nil
}

// describe says what a path given to --against is, when it is not a file
// that Load can read: the start of the message that also says why it is
// not a git revision.
func describe(name string) string {
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "no such file"
	case err != nil:
		return "cannot be read (" + pathErr(err) + ")"
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(name)
		fi, err = os.Stat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("a symbolic link to %q, which does not exist", target)
		case errors.Is(err, syscall.ELOOP):
			return fmt.Sprintf("a symbolic link to %q that loops back on itself", target)
		case err != nil:
			return fmt.Sprintf("a symbolic link to %q that cannot be followed (%s)", target, pathErr(err))
		}
	}
	if fi.IsDir() {
		return "a directory, not a lock file or a catalog file"
	}
	return "not a regular file"
}

// pathErr is the reason of a path error, without the path that the
// message names already.
func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadFile reads a lock file or a catalog file, by its format.
func loadFile(name string) (*lock.Lock, error) {
	data, err := inputfile.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(data, &probe) != nil || !strings.HasPrefix(probe.Format, "toolc.catalog/") {
		l, err := lock.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		l.File = name
		return l, nil
	}
	cat, err := catalog.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// toolc build writes each service's directory relative to the catalog
	// file; the contracts here are relative to the working directory.
	if err := cat.Rebase(filepath.Dir(name), "."); err != nil {
		return nil, err
	}
	l := lock.FromCatalog(cat)
	l.File = name
	return l, nil
}

// atRevision compiles the patterns as they were at a git revision: the
// revision's tree is written into a temporary directory (revtree, which
// keeps every write and every link inside it), and compiled from the same
// place in it as the working directory is in the repository.
func atRevision(ctx context.Context, ref string, patterns []string) (*Baseline, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	tree, err := revtree.Materialize(ctx, wd, ref)
	if err != nil {
		return nil, err
	}
	defer tree.Remove()
	b := &Baseline{Label: fmt.Sprintf("%s (%s)", ref, tree.Commit[:min(12, len(tree.Commit))])}
	for _, s := range tree.Skipped {
		b.Notes = append(b.Notes, fmt.Sprintf("at %s, %s", ref, s))
	}
	if _, err := os.Stat(tree.Dir); err != nil {
		b.Lock = &lock.Lock{Services: []*lock.Service{}}
		b.Notes = append(b.Notes, fmt.Sprintf("%s has no %s: every tool is new", ref, filepath.ToSlash(tree.Prefix)))
		return b, nil
	}
	// An absolute pattern names the working tree; at the revision, the
	// same directory is below tree.Dir.
	oldPatterns := make([]string, len(patterns))
	for i, p := range patterns {
		oldPatterns[i] = p
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(wd, p)
			if err != nil || !filepath.IsLocal(rel) && rel != "." {
				return nil, fmt.Errorf("pattern %q is outside the working directory, so it has no counterpart at the revision", p)
			}
			oldPatterns[i] = "./" + filepath.ToSlash(rel)
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: tree.Dir}, oldPatterns...)
	if err != nil {
		if strings.Contains(err.Error(), "matched no") || errors.Is(err, fs.ErrNotExist) {
			b.Lock = &lock.Lock{Services: []*lock.Service{}}
			b.Notes = append(b.Notes, fmt.Sprintf("no contracts at %s: every tool is new", ref))
			return b, nil
		}
		return nil, fmt.Errorf("at %s: %v", b.Label, err)
	}
	if res.HasErrors() {
		// Leave out the services whose packages have errors: what they
		// compiled to is not what they meant.
		errDirs := map[string]bool{}
		for _, d := range res.Diagnostics {
			if d.Severity == diag.Error && d.Pos.File != "" {
				errDirs[filepath.ToSlash(filepath.Dir(d.Pos.File))] = true
			}
		}
		kept := res.Catalog.Services[:0]
		for _, s := range res.Catalog.Services {
			if !errDirs[s.Dir] {
				kept = append(kept, s)
			}
		}
		res.Catalog.Services = kept
		errs, _ := diag.Count(res.Diagnostics)
		b.Notes = append(b.Notes, fmt.Sprintf("the contracts at %s have %s; their packages are left out of the comparison", ref, plural(errs, "error")))
	}
	b.Lock = lock.FromCatalog(res.Catalog)
	return b, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
