package compiler

import (
	"slices"
	"strings"
	"unicode"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/diag"
)

// An ack is a `// toolc:ignore RULE[,RULE...] REASON` comment, after buf's
// `// buf:lint:ignore`: it acknowledges the warnings of the rules it names
// inside the CUE declaration it precedes (a field, a tool, the service),
// for a contract that has a reason to keep what the rule warns about, such
// as a faithful port whose field names mix snake_case and camelCase.
// Acknowledged warnings stay in --format json, marked, and are counted in
// the text summary. Errors are never acknowledged: an error means the
// contract cannot compile, serve or be trusted as written.
type ack struct {
	pos    token.Pos // of the comment
	rules  []string
	reason string
	// The declaration's span; all of the package when the comment
	// precedes the service's schema.#Service & {...}.
	start, end token.Pos
	service    bool
}

// ackPrefix starts an acknowledgement comment.
const ackPrefix = "toolc:ignore"

// collectAcks returns the acknowledgement comments of a package's files:
// the doc comments of its fields and embeddings. service is where the
// package declares its service.
func collectAcks(files []*ast.File, service token.Pos) []*ack {
	var acks []*ack
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.Field, *ast.EmbedDecl:
			default:
				return true
			}
			for _, cg := range ast.Comments(n) {
				if !cg.Doc {
					continue
				}
				for _, c := range cg.List {
					text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
					rest, ok := strings.CutPrefix(text, ackPrefix)
					if !ok || rest != "" && !unicode.IsSpace(rune(rest[0])) {
						continue
					}
					a := &ack{pos: c.Pos(), start: n.Pos(), end: n.End(), service: n.Pos() == service}
					ids, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
					for _, id := range strings.Split(ids, ",") {
						if id = strings.TrimSpace(id); id != "" {
							a.rules = append(a.rules, id)
						}
					}
					a.reason = strings.TrimSpace(reason)
					acks = append(acks, a)
				}
			}
			return true
		}, nil)
	}
	return acks
}

// acknowledgeable reports whether toolc:ignore may acknowledge r's
// diagnostics: only a rule that warns, and only its warnings.
func acknowledgeable(r *Rule) bool {
	return r.ID != ignoreID && (r.Severity == diag.Warning || r.Warns)
}

const ignoreID = "ignore"

// ignoreRule checks the acknowledgement comments themselves, against the
// rules of the run: each names rules that warn, and says why.
// acknowledge, after every rule has run, applies them and warns about
// those that acknowledge nothing.
func ignoreRule(all []*Rule) *Rule {
	return &Rule{
		ID:       ignoreID,
		Doc:      "a // toolc:ignore RULE REASON comment names rules that warn, gives a reason, and acknowledges a warning of each rule inside the declaration it precedes; errors cannot be acknowledged",
		Severity: diag.Error,
		Warns:    true,
		Check: func(p *Pass) {
			var ids []string
			for _, r := range all {
				ids = append(ids, r.ID)
			}
			for _, pkg := range p.packages {
				for _, a := range pkg.acks {
					if len(a.rules) == 0 {
						p.reportf(a.pos, "%s names no rule; write // %s RULE REASON, such as // %s field-name the names are the upstream server's", ackPrefix, ackPrefix, ackPrefix)
						continue
					}
					for _, id := range a.rules {
						i := slices.IndexFunc(all, func(r *Rule) bool { return r.ID == id })
						switch {
						case i < 0:
							p.reportf(a.pos, "%s names %q, which is no rule%s; toolc rules lists them", ackPrefix, id, suggest(id, ids))
						case !acknowledgeable(all[i]):
							p.reportf(a.pos, "%s cannot acknowledge %s: it reports errors, which must be fixed; only warnings can be acknowledged", ackPrefix, id)
						}
					}
					if a.reason == "" {
						p.reportf(a.pos, "%s %s gives no reason; say why the contract keeps what the rule warns about, after the rule: // %s %s REASON",
							ackPrefix, strings.Join(a.rules, ","), ackPrefix, strings.Join(a.rules, ","))
					}
				}
			}
		},
	}
}

// acknowledge marks each warning in ds that an acknowledgement comment
// covers, and warns through p, whose rule is ignoreRule's, about each rule
// a comment names that it acknowledged no warning of: a stale comment
// would silence a warning that comes back later. p must not report into
// ds.
func acknowledge(p *Pass, byID map[string]*Rule, ds []diag.Diagnostic) {
	for _, pkg := range p.packages {
		for _, a := range pkg.acks {
			start, end := p.position(a.start), p.position(a.end)
			used := map[string]bool{}
			for i := range ds {
				d := &ds[i]
				r := byID[d.Rule]
				if d.Severity != diag.Warning || r == nil || !acknowledgeable(r) || !slices.Contains(a.rules, d.Rule) || a.reason == "" {
					continue
				}
				in := d.Pos.File == start.File && !before(d.Pos, start) && !before(end, d.Pos)
				if a.service {
					in = slices.ContainsFunc(pkg.files, func(f string) bool { return relPath(p.wd, f) == d.Pos.File })
				}
				if in {
					d.Acknowledged, d.Reason = true, a.reason
					used[d.Rule] = true
				}
			}
			for _, id := range a.rules {
				if r := byID[id]; r != nil && acknowledgeable(r) && a.reason != "" && !used[id] {
					p.warnf(a.pos, "%s %s acknowledges no %s warning in the declaration below it; remove it, or move it to the declaration that draws the warning", ackPrefix, id, id)
				}
			}
		}
	}
}

// before reports whether a comes before b in the same file.
func before(a, b diag.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}
