package lock

import (
	"bytes"
	"errors"
	"io/fs"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/inputfile"
)

// LoadIfExists is LoadFile, but returns a nil Lock and no error when
// there is no file name: check, build and lock take toolc.lock into
// account when it is there.
func LoadIfExists(name string) (*Lock, error) {
	l, err := LoadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return l, err
}

// Keep adds to l the services of old that the patterns do not cover (see
// Split), as they were: a lock of some of the contracts leaves the others'
// records alone.
func (l *Lock) Keep(old *Lock, wd string, patterns []string) {
	_, keep := old.Split(wd, patterns)
	l.Services = append(l.Services, keep.Services...)
}

// NumTools is the number of tools in the lock.
func (l *Lock) NumTools() int {
	n := 0
	for _, s := range l.Services {
		n += len(s.Tools)
	}
	return n
}

// Update writes the lock to name (see WriteFile), unless the file holds
// it already, and reports whether it wrote it: an unchanged file is left
// alone, so that watchers and builds see no edit.
func (l *Lock) Update(name string) (wrote bool, err error) {
	data := l.Marshal()
	if cur, err := inputfile.ReadFile(name); err == nil && bytes.Equal(cur, data) {
		return false, nil
	}
	return true, l.WriteFile(name)
}

// Kind is "breaking", "allowed" (breaking, but allowed by a major version
// bump) or "compatible".
func (c Change) Kind() string {
	switch {
	case c.Breaking && c.Allowed:
		return "allowed"
	case c.Breaking:
		return "breaking"
	}
	return "compatible"
}

// Diagnostic is the change as diag prints it: an error when it breaks
// the lock, a warning when a major version bump allows it, a notice when
// it is compatible.
func (c Change) Diagnostic() diag.Diagnostic {
	sev := diag.Notice
	switch c.Kind() {
	case "breaking":
		sev = diag.Error
	case "allowed":
		sev = diag.Warning
	}
	d := diag.Diagnostic{
		Pos:      diag.Position{File: c.Pos.File, Line: c.Pos.Line, Column: c.Pos.Column},
		Severity: sev,
		Rule:     c.Rule,
		Message:  c.Message,
		Change: diag.Change{Kind: c.Kind(), Breaking: c.Breaking, Allowed: c.Allowed,
			Service: c.Service, Tool: c.Tool, Field: c.Field},
	}
	if c.Tokens != nil {
		tokens := diag.TokenCounts(c.Tokens)
		d.Change.Tokens = &tokens
	}
	return d
}

// Diagnostics is each change's Diagnostic.
func Diagnostics(changes []Change) []diag.Diagnostic {
	ds := make([]diag.Diagnostic, len(changes))
	for i, c := range changes {
		ds[i] = c.Diagnostic()
	}
	return ds
}

// Accepted is the changes that break the old lock, which a new lock
// accepts, as diagnostics of the kind "accepted": toolc lock says what it
// accepts, so that a breaking change is a decision.
func Accepted(changes []Change) []diag.Diagnostic {
	var ds []diag.Diagnostic
	for _, c := range changes {
		if c.Kind() == "breaking" {
			d := c.Diagnostic()
			d.Change.Kind = "accepted"
			ds = append(ds, d)
		}
	}
	return ds
}

// Tally counts the changes of each kind; what a change costs in tokens is
// no change of the contract, and is not counted.
func Tally(changes []Change) (breaking, allowed, compatible int) {
	for _, c := range changes {
		if c.Tokens != nil {
			continue
		}
		switch c.Kind() {
		case "breaking":
			breaking++
		case "allowed":
			allowed++
		default:
			compatible++
		}
	}
	return breaking, allowed, compatible
}
