package compiler

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/lock"
)

// stableNameRule holds the contracts to the lock file l: a tool's name, its
// MCP name and its request are a contract with every model, prompt and
// client that uses it. It compares the lock's services in the directories
// that the patterns cover, and reports every breaking change (lock.Diff) at
// the key of the new contract that made it; with no lock it reports
// nothing (toolc check and toolc build pass toolc.lock when it exists). A
// service whose major version went up may break its own tools; toolc lock
// accepts an intended change.
func stableNameRule(l *lock.Lock, patterns []string) *Rule {
	return &Rule{
		ID:       "stable-name",
		Doc:      "against toolc.lock: no tool, field, prompt, resource or skill removed or renamed, no MCP name or resource URI changed, no request or prompt argument made stricter, no response field removed or changed, no scope added, unless the service's major version went up",
		Severity: diag.Error,
		Check: func(p *Pass) {
			if l == nil {
				return
			}
			for _, c := range stableChanges(p.wd, patterns, p.packages, l) {
				if !c.Breaking || c.Allowed {
					continue
				}
				msg := c.Message
				if c.Pos.Line == 0 {
					msg += "; if that is intended, accept it with toolc lock"
				} else {
					msg += fmt.Sprintf("; if that is intended, accept it with toolc lock, or bump the major version of service %q to allow it", c.Service)
				}
				p.reportAt(diag.Position{File: filepath.FromSlash(c.Pos.File), Line: c.Pos.Line, Column: c.Pos.Column}, "%s", msg)
			}
		},
	}
}

// reportAt reports a problem at a position that is already in diagnostic
// form.
func (p *Pass) reportAt(pos diag.Position, format string, args ...any) {
	*p.diags = append(*p.diags, diag.Diagnostic{
		Pos:      pos,
		Severity: p.rule.Severity,
		Rule:     p.rule.ID,
		Message:  fmt.Sprintf(format, args...),
	})
}

// Diff compares the contracts that res compiled with a lock, as the
// stable-name rule does, and returns every change, breaking or compatible,
// sorted by position. Each change is positioned at the key of the new
// contract where it happened (a bound, the required flag, the request's
// fields for a removed field, the service for a removed tool); a change to
// a service that is gone names the lock's file, if it has one.
//
// Only the lock's services in directories that the compiled patterns cover
// are compared, and a package that did not evaluate cleanly is left out on
// both sides: its errors come first.
func Diff(res *Result, old *lock.Lock) []lock.Change {
	return stableChanges(res.wd, res.patterns, res.Packages, old)
}

func stableChanges(wd string, patterns []string, pkgs []*Package, old *lock.Lock) []lock.Change {
	in, _ := old.Split(wd, patterns)
	low := lowerer{wd: wd}
	cat := &catalog.Catalog{}
	broken := map[string]bool{}
	roots := map[string]*node{}
	for _, pkg := range pkgs {
		dir := filepath.ToSlash(relPath(wd, pkg.Dir))
		if pkg.root == nil || pkg.root.kind != kStruct || len(pkg.loadErrs) > 0 || len(pkg.evalErrs) > 0 {
			broken[dir] = true
			continue
		}
		s := low.service(pkg)
		if s.Name == "" {
			broken[dir] = true
			continue
		}
		cat.Services = append(cat.Services, s)
		if roots[s.Name] == nil {
			roots[s.Name] = pkg.root
		}
	}
	in.Services = slices.DeleteFunc(in.Services, func(s *lock.Service) bool { return broken[s.Dir] })
	lockFile := ""
	if old.File != "" {
		abs, err := filepath.Abs(old.File)
		if err == nil {
			lockFile = filepath.ToSlash(relPath(wd, abs))
		}
	}

	changes := lock.Diff(in, lock.FromCatalog(cat))
	for i := range changes {
		c := &changes[i]
		root := roots[c.Service]
		switch {
		case root == nil:
			if c.Pos.Line == 0 && lockFile != "" {
				c.Pos = catalog.Pos{File: lockFile}
			}
		default:
			n := root
			for _, key := range c.Path {
				next := n.get(key)
				if next == nil || !next.pos.IsValid() {
					break
				}
				n = next
			}
			if pos := low.pos(n.pos); pos.Line > 0 {
				c.Pos = pos
			}
		}
	}
	slices.SortStableFunc(changes, func(a, b lock.Change) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	return changes
}
