package compiler

import (
	"fmt"
	"slices"

	"github.com/toolc/toolc/diag"
)

// authScopeRule checks the OAuth scopes that auth.scopes of a service or a
// tool requires. A scope goes into WWW-Authenticate challenges, Protected
// Resource Metadata and the authorization request of every client, so one
// that RFC 6749 does not allow would break them all at run time, far from
// the contract.
var authScopeRule = &Rule{
	ID:       "auth-scope",
	Doc:      "auth.scopes of a service or tool is a list of OAuth scopes, each an RFC 6749 scope-token (printable ASCII but space, \" and \\), listed once",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			checkScopes(p, s.root, fmt.Sprintf("service %q", s.name()))
			for _, t := range s.root.get("tools").structFields() {
				checkScopes(p, t, fmt.Sprintf("tool %q", t.label))
			}
		}
	},
}

func checkScopes(p *Pass, owner *node, where string) {
	scopes := owner.get("auth").get("scopes")
	switch {
	case scopes == nil || scopes.kind == kError:
		return
	case scopes.kind == kIncomplete:
		p.reportf(scopes.pos, "auth.scopes of %s must be a concrete list of strings, not %s", where, scopes.str)
		return
	case scopes.kind != kList:
		p.reportf(scopes.pos, "auth.scopes of %s must be a list of strings such as [\"orders:read\"], not %s", where, scopes.kind)
		return
	}
	var seen []string
	for _, e := range scopes.elems {
		if e.kind != kString {
			p.reportf(e.pos, "auth.scopes of %s holds %s; a scope is a string such as \"orders:read\"", where, e.kind)
			continue
		}
		if bad := scopeProblem(e.str); bad != "" {
			p.reportf(e.pos, "scope %q in auth.scopes of %s %s; an OAuth scope (RFC 6749) is printable ASCII without space, \" or \\", e.str, where, bad)
			continue
		}
		if slices.Contains(seen, e.str) {
			p.reportf(e.pos, "scope %q is listed twice in auth.scopes of %s", e.str, where)
			continue
		}
		seen = append(seen, e.str)
	}
}

// scopeProblem says what keeps s from being an RFC 6749 scope-token,
// 1*( %x21 / %x23-5B / %x5D-7E ), or "" if nothing does.
func scopeProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	for _, c := range s {
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return fmt.Sprintf("has %q", c)
		}
	}
	return ""
}
