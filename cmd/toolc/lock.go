package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// workingLock reads toolc.lock from the working directory, as check, build
// and lock do, or returns nil when there is none. A lock that cannot be
// read is an I/O problem: the command stops before it writes anything.
func workingLock() (*lock.Lock, error) {
	l, err := lock.LoadFile(lock.FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return l, err
}

// runLock records the contracts in toolc.lock, accepting every change
// since the last lock. With patterns, the lock's other services are kept
// as they were.
func runLock(e env, args []string) error {
	fs := newFlags(e, "lock")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	old, err := workingLock()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	res, err := compiler.Compile(compiler.Config{}, patterns...)
	if err != nil {
		return err
	}
	if err := reportErrors(e, "lock", res); err != nil {
		return err
	}
	l := lock.FromCatalog(res.Catalog)
	var changes []lock.Change
	if old != nil {
		changes = compiler.Diff(res, old)
		_, keep := old.Split(wd, patterns)
		l.Services = append(l.Services, keep.Services...)
	}
	tools := 0
	for _, s := range l.Services {
		tools += len(s.Tools)
	}
	what := fmt.Sprintf("%s, %s", plural(len(l.Services), "service"), plural(tools, "tool"))
	if cur, err := inputfile.ReadFile(lock.FileName); err == nil && bytes.Equal(cur, l.Marshal()) {
		fmt.Fprintf(e.stderr, "toolc lock: %s is up to date: %s\n", lock.FileName, what)
		return nil
	}
	if err := l.WriteFile(lock.FileName); err != nil {
		return err
	}
	// Say what the new lock accepts, so that the change is a decision.
	var breaking, compatible int
	for _, c := range changes {
		if c.Breaking && !c.Allowed {
			breaking++
			fmt.Fprintf(e.stderr, "%s: accepted: %s [%s]\n", posString(c.Pos), c.Message, c.Rule)
		} else {
			compatible++
		}
	}
	accepted := ""
	if old != nil {
		accepted = fmt.Sprintf("; accepted %s and %s", plural(breaking, "breaking change"), plural(compatible, "other change"))
	}
	fmt.Fprintf(e.stderr, "toolc lock: wrote %s: %s%s\n", lock.FileName, what, accepted)
	return nil
}

// runDiff compares the contracts with toolc.lock, a lock or catalog file,
// or the contracts at a git revision, and prints every change.
func runDiff(e env, args []string) error {
	fs := newFlags(e, "diff")
	against := fs.String("against", "", "compare with a lock file, a catalog file or a git revision (default "+lock.FileName+")")
	formatName := fs.String("format", "text", "output format: "+strings.Join(diag.FormatNames(), ", "))
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	format, err := diag.ParseFormat(*formatName)
	if err != nil {
		return usageErr(err)
	}
	old, label, err := loadAgainst(e, *against, patterns)
	if err != nil {
		return err
	}
	res, err := compiler.Compile(compiler.Config{}, patterns...)
	if err != nil {
		return err
	}
	if res.HasErrors() {
		diag.Print(e.stderr, diag.Text, res.Diagnostics, res.Source)
		errs, _ := diag.Count(res.Diagnostics)
		return failf("the contracts have %s; fix them, then compare", plural(errs, "error"))
	}
	changes := compiler.Diff(res, old)
	if err := printChanges(e.stdout, format, changes); err != nil {
		return err
	}
	var breaking, allowed, compatible int
	for _, c := range changes {
		switch {
		case c.Breaking && c.Allowed:
			allowed++
		case c.Breaking:
			breaking++
		default:
			compatible++
		}
	}
	if format == diag.Text {
		if len(changes) == 0 {
			fmt.Fprintf(e.stderr, "toolc diff: against %s: no changes\n", label)
		} else {
			fmt.Fprintf(e.stderr, "toolc diff: against %s: %d breaking, %d allowed by a major version bump, %d compatible\n", label, breaking, allowed, compatible)
		}
	}
	if breaking > 0 {
		return exitWith(exitFail)
	}
	return nil
}

// loadAgainst reads what diff compares with: toolc.lock by default, a file
// when one exists by that name (a lock, or a catalog built by toolc
// build), and otherwise a git revision. It returns a label for messages.
func loadAgainst(e env, against string, patterns []string) (*lock.Lock, string, error) {
	if against == "" {
		l, err := lock.LoadFile(lock.FileName)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", usagef("no %s here: record the contracts with toolc lock, or compare with --against FILE|GIT-REF", lock.FileName)
		}
		return l, lock.FileName, err
	}
	if fi, err := os.Stat(against); err == nil && !fi.IsDir() {
		l, err := loadAgainstFile(against)
		return l, against, err
	}
	// Not a file to read: a git revision, unless git says it is none.
	// A directory may share its name with a branch, so it is tried too.
	l, label, err := gitContracts(e, against, patterns)
	if err != nil {
		wd, _ := os.Getwd()
		what := describeAgainst(against)
		switch {
		case errors.Is(err, revtree.ErrNoGit):
			err = fmt.Errorf("%s, and git, which would read it as a revision, is not installed", what)
		case errors.Is(err, revtree.ErrNotRepository):
			err = fmt.Errorf("%s, and %s is not in a git repository, so it is not a revision either", what, wd)
		case errors.Is(err, revtree.ErrNoRevision):
			err = fmt.Errorf("%s, and no such git revision", what)
		}
		return nil, "", usagef("--against %s: %v", against, err)
	}
	return l, label, nil
}

// describeAgainst says what a path given to --against is, when it is not
// a file that diff can read: the start of the message that also says why
// it is not a git revision.
func describeAgainst(name string) string {
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

// loadAgainstFile reads a lock file or a catalog file, by its format.
func loadAgainstFile(name string) (*lock.Lock, error) {
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
	for _, s := range cat.Services {
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(name), filepath.FromSlash(s.Dir)))
		if err != nil {
			return nil, err
		}
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(wd, abs); err == nil {
			s.Dir = filepath.ToSlash(rel)
		}
	}
	l := lock.FromCatalog(cat)
	l.File = name
	return l, nil
}

// gitContracts compiles the patterns as they were at a git revision: the
// revision's tree is written into a temporary directory (revtree, which
// keeps every write and every link inside it), and compiled from the same
// place in it as the working directory is in the repository.
func gitContracts(e env, ref string, patterns []string) (*lock.Lock, string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	tree, err := revtree.Materialize(context.Background(), wd, ref)
	if err != nil {
		return nil, "", err
	}
	defer tree.Remove()
	for _, s := range tree.Skipped {
		fmt.Fprintf(e.stderr, "toolc diff: note: at %s, %s\n", ref, s)
	}
	sha, prefix, oldWD := tree.Commit, tree.Prefix, tree.Dir
	label := fmt.Sprintf("%s (%s)", ref, sha[:min(12, len(sha))])
	empty := &lock.Lock{Services: []*lock.Service{}}
	if _, err := os.Stat(oldWD); err != nil {
		fmt.Fprintf(e.stderr, "toolc diff: %s has no %s: every tool is new\n", ref, filepath.ToSlash(prefix))
		return empty, label, nil
	}
	// An absolute pattern names the working tree; at the revision, the
	// same directory is below oldWD.
	oldPatterns := make([]string, len(patterns))
	for i, p := range patterns {
		oldPatterns[i] = p
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(wd, p)
			if err != nil || !filepath.IsLocal(rel) && rel != "." {
				return nil, "", fmt.Errorf("pattern %q is outside the working directory, so it has no counterpart at the revision", p)
			}
			oldPatterns[i] = "./" + filepath.ToSlash(rel)
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: oldWD}, oldPatterns...)
	if err != nil {
		if strings.Contains(err.Error(), "matched no") || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(e.stderr, "toolc diff: no contracts at %s: every tool is new\n", ref)
			return empty, label, nil
		}
		return nil, "", fmt.Errorf("at %s: %v", label, err)
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
		fmt.Fprintf(e.stderr, "toolc diff: note: the contracts at %s have %s; their packages are left out of the comparison\n", ref, plural(errs, "error"))
	}
	return lock.FromCatalog(res.Catalog), label, nil
}

func posString(p catalog.Pos) string {
	switch {
	case p.File == "":
		return "-"
	case p.Line == 0:
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

func changeKind(c lock.Change) string {
	switch {
	case c.Breaking && c.Allowed:
		return "allowed"
	case c.Breaking:
		return "breaking"
	}
	return "compatible"
}

// printChanges renders changes: text lines `FILE:LINE:COL: breaking:
// MESSAGE [RULE]`, one JSON array, or GitHub Actions annotations (an error
// for a breaking change, a warning for one that a major version bump
// allows, a notice for a compatible one).
func printChanges(w io.Writer, f diag.Format, changes []lock.Change) error {
	bw := bufio.NewWriter(w)
	switch f {
	case diag.JSON:
		type change struct {
			File     string `json:"file"`
			Line     int    `json:"line"`
			Column   int    `json:"column"`
			Rule     string `json:"rule"`
			Breaking bool   `json:"breaking"`
			Allowed  bool   `json:"allowed"`
			Service  string `json:"service"`
			Tool     string `json:"tool"`
			Field    string `json:"field"`
			Message  string `json:"message"`
		}
		out := make([]change, len(changes))
		for i, c := range changes {
			out[i] = change{c.Pos.File, c.Pos.Line, c.Pos.Column, c.Rule, c.Breaking, c.Allowed, c.Service, c.Tool, c.Field, c.Message}
		}
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	case diag.GitHub:
		for _, c := range changes {
			level := map[string]string{"breaking": "error", "allowed": "warning", "compatible": "notice"}[changeKind(c)]
			var props []string
			if c.Pos.File != "" {
				props = append(props, "file="+ghProperty.Replace(c.Pos.File))
			}
			if c.Pos.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", c.Pos.Line), fmt.Sprintf("col=%d", c.Pos.Column))
			}
			props = append(props, "title="+ghProperty.Replace(c.Rule))
			fmt.Fprintf(bw, "::%s %s::%s\n", level, strings.Join(props, ","), ghData.Replace(c.Message))
		}
	default:
		for _, c := range changes {
			if c.Pos.File != "" {
				fmt.Fprintf(bw, "%s: ", posString(c.Pos))
			}
			fmt.Fprintf(bw, "%s: %s [%s]\n", changeKind(c), c.Message, c.Rule)
		}
	}
	return bw.Flush()
}

// GitHub's workflow commands percent-encode what would end a message or a
// property early.
var (
	ghData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)
