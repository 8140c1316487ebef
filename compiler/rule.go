package compiler

import (
	"fmt"
	"iter"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/schema"
)

// Rule is one check that toolc holds contracts to. Rules are values: adding
// a rule means adding one Rule and one fixture under testdata/rules. A rule
// that needs configuration, such as the lock that stable-name compares
// with, is made by a function that takes it, and its Check keeps it.
type Rule struct {
	// ID names the rule in diagnostics; scripts match on it, so it never
	// changes once released.
	ID string
	// Doc says in one line what the rule checks.
	Doc string
	// Severity is the severity of every diagnostic the rule reports.
	Severity diag.Severity
	// Check inspects every package of a run and reports through the pass.
	// It never prints.
	Check func(*Pass)
	// Warns is set on a rule of Severity Error that reports some findings
	// as warnings (field-name's mixed styles), which a toolc:ignore
	// comment can acknowledge, as it can every finding of a rule of
	// Severity Warning.
	Warns bool
}

// Rules returns toolc's rules in the order `toolc rules` lists them,
// configured as `toolc check` runs them without a lock file.
func Rules() []*Rule { return rules(Config{}, nil) }

// rules returns the rules of one run: provider-limit warns about cfg's
// targets, and stable-name compares cfg's lock with the contracts of the
// services in the directories that the patterns cover.
func rules(cfg Config, patterns []string) []*Rule {
	all := []*Rule{
		syntaxRule,
		schemaRule,
		serviceNameRule,
		toolNameRule,
		fieldNameRule,
		descriptionRule,
		hiddenTextRule,
		injectedInstructionRule,
		singleRequestRule,
		flatFieldsRule,
		freeFormRule,
		enumRule,
		defaultRule,
		boundsRule,
		exampleRule,
		uniqueNameRule,
		mcpNameRule,
		mcpHeaderRule,
		authScopeRule,
		promptRule,
		resourceRule,
		skillRule,
		taskSupportRule,
		handlerRule,
		groupRule,
		upstreamRule,
		providerLimitRule(cfg.Targets, cfg.Strict),
		tokenBudgetRule,
		stableNameRule(cfg.Lock, patterns),
	}
	return append(all, ignoreRule(all))
}

// Package is one loaded contract package, as the rules see it.
type Package struct {
	// Dir is the package's directory, absolute.
	Dir string
	// Name is the CUE package name.
	Name string

	root     *node             // nil when the package did not load
	files    []string          // the package's .cue files, absolute
	acks     []*ack            // its toolc:ignore comments
	loadErrs []cueerrors.Error // syntax and load errors
	evalErrs []cueerrors.Error // evaluation errors, such as conflicts
	schema   string            // the overlaid schema file, never a position to report
}

// Pass is what a rule's Check sees: every package of the run, and a way to
// report.
type Pass struct {
	rule     *Rule
	packages []*Package
	// wd is the directory that positions are reported relative to.
	wd    string
	diags *[]diag.Diagnostic
}

// reportf reports a problem at pos.
func (p *Pass) reportf(pos token.Pos, format string, args ...any) {
	*p.diags = append(*p.diags, diag.Diagnostic{
		Pos:      p.position(pos),
		Severity: p.rule.Severity,
		Rule:     p.rule.ID,
		Message:  fmt.Sprintf(format, args...),
	})
}

// warnf reports a warning at pos under the rule's ID, for a rule whose
// other findings are errors (field-name's mixed styles).
func (p *Pass) warnf(pos token.Pos, format string, args ...any) {
	*p.diags = append(*p.diags, diag.Diagnostic{
		Pos:      p.position(pos),
		Severity: diag.Warning,
		Rule:     p.rule.ID,
		Message:  fmt.Sprintf(format, args...),
	})
}

// reportCUE reports an error that CUE found, at its first position in the
// user's files.
func (p *Pass) reportCUE(pkg *Package, err cueerrors.Error) {
	pos := err.Position()
	if p.isSchema(pkg, pos) || !pos.IsValid() {
		pos = token.NoPos
		for _, ip := range err.InputPositions() {
			if ip.IsValid() && !p.isSchema(pkg, ip) {
				pos = ip
				break
			}
		}
	}
	msg := cueMessage(err)
	if name, ok := undefinedDefinition(err); ok {
		msg += suggest(name, schemaDefinitions())
	}
	for _, ip := range append([]token.Pos{err.Position()}, err.InputPositions()...) {
		if dir := filepath.Dir(ip.Filename()); ip.IsValid() && dir != pkg.Dir && within(dir, pkg.Dir) {
			msg += fmt.Sprintf("; %s is part of this package too, because CUE adds a parent directory's files of the same package name: give one of the two packages another name", p.position(ip).File)
			break
		}
	}
	p.reportf(pos, "%s", msg)
}

// undefinedDefinition returns the name in "undefined field: #Servce".
func undefinedDefinition(err cueerrors.Error) (string, bool) {
	format, args := err.Msg()
	if format != "undefined field: %s" || len(args) != 1 {
		return "", false
	}
	name := fmt.Sprint(args[0])
	return name, strings.HasPrefix(name, "#")
}

// schemaDefinitions returns the definitions of the embedded schema, such
// as #Service, for suggestions.
var schemaDefinitions = sync.OnceValue(func() []string {
	var defs []string
	f, err := parser.ParseFile(schema.FileName, schema.Source())
	if err != nil {
		return nil
	}
	for _, decl := range f.Decls {
		if field, ok := decl.(*ast.Field); ok {
			if name, _, err := ast.LabelName(field.Label); err == nil && strings.HasPrefix(name, "#") {
				defs = append(defs, name)
			}
		}
	}
	return defs
})

func (p *Pass) isSchema(pkg *Package, pos token.Pos) bool {
	return pos.IsValid() && pos.Filename() == pkg.schema
}

// position converts a CUE position to a diagnostic position, the one place
// where toolc does so.
func (p *Pass) position(pos token.Pos) diag.Position {
	if !pos.IsValid() {
		return diag.Position{}
	}
	tp := pos.Position()
	return diag.Position{File: relPath(p.wd, tp.Filename), Line: tp.Line, Column: tp.Column}
}

// A service is the root value of a package that evaluated to a struct.
type service struct {
	pkg  *Package
	root *node
}

// name returns the service's name, or "" if it has none yet.
func (s service) name() string {
	if n := s.root.get("name"); n != nil && n.kind == kString {
		return n.str
	}
	return ""
}

// A tool is one entry of a service's tools map.
type tool struct {
	service
	node *node
}

// A field is one entry of a tool's request or response fields, or of the
// fields of a record field's items.
type field struct {
	tool
	message string // "request" or "response"
	node    *node
	// record is the record field whose items have this field; nil for a
	// field of the request or response itself.
	record *node
}

func (p *Pass) services() iter.Seq[service] {
	return func(yield func(service) bool) {
		for _, pkg := range p.packages {
			if pkg.root != nil && pkg.root.kind == kStruct {
				if !yield(service{pkg, pkg.root}) {
					return
				}
			}
		}
	}
}

func (p *Pass) tools() iter.Seq[tool] {
	return func(yield func(tool) bool) {
		for s := range p.services() {
			for _, t := range s.root.get("tools").structFields() {
				if !yield(tool{s, t}) {
					return
				}
			}
		}
	}
}

// fields yields every field of every tool's request and response, each
// record field followed by the fields of its items (one level: a record
// in a record is flat-fields' to report, and its fields are not yielded).
func (p *Pass) fields() iter.Seq[field] {
	return func(yield func(field) bool) {
		for t := range p.tools() {
			for _, msg := range []string{"request", "response"} {
				for _, f := range t.node.get(msg).get("fields").structFields() {
					if !yield(field{t, msg, f, nil}) {
						return
					}
					for _, sub := range recordFields(f) {
						if !yield(field{t, msg, sub, f}) {
							return
						}
					}
				}
			}
		}
	}
}

// recordFields returns the fields of a record field's items: those of
// items: fields: {...} on an array field. It returns nothing for any other
// field.
func recordFields(n *node) []*node {
	if !isRecord(n) {
		return nil
	}
	return n.get("items").get("fields").structFields()
}

// isRecord reports whether a field is a record field: an array whose items
// are written fields: {...}.
func isRecord(n *node) bool {
	items := n.get("items")
	return stringAt(n, "type") == "array" && items != nil && items.kind == kStruct && items.get("fields") != nil
}

// structFields returns a struct's fields, and nothing for any other node.
func (n *node) structFields() []*node {
	if n == nil || n.kind != kStruct {
		return nil
	}
	return n.fields
}

// describe names a field for messages: `request field "city" of tool
// "x"`, or `request field "edits[].oldText" of tool "x"` for a field of the
// items of record field edits.
func (f field) describe() string {
	return fmt.Sprintf("%s field %q of tool %q", f.message, f.name(), f.tool.node.label)
}

// name is the field's name, or for a field of a record's items the record
// field's name, "[]." and its own, as toolc.lock names it.
func (f field) name() string {
	if f.record != nil {
		return f.record.label + "[]." + f.node.label
	}
	return f.node.label
}

// RulesMarkdown renders the rules as a Markdown table, for docs/rules.md,
// from the same values that the checks run from.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("| ID | severity | checks |\n|---|---|---|\n")
	for _, r := range Rules() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, r.Severity, strings.ReplaceAll(r.Doc, "|", `\|`))
	}
	return b.String()
}

// embeddedPos matches a position that a wrapped CUE error spells out in
// its text; the diagnostic carries the position already.
var embeddedPos = regexp.MustCompile(`\S+\.cue:\d+:\d+: `)

// cueMessage renders a CUE error without the noise that means nothing to a
// contract author: the synthetic module path that load errors start with,
// and the dangling colon of a wrapped error.
func cueMessage(err cueerrors.Error) string {
	msg := err.Error()
	if path := err.Path(); len(path) == 1 && strings.Contains(path[0], "@") {
		msg = strings.TrimPrefix(msg, path[0]+": ")
	}
	msg = embeddedPos.ReplaceAllString(msg, "")
	msg = strings.TrimRight(msg, ": \n")
	if rest, ok := strings.CutPrefix(msg, "import failed: "); ok {
		msg = rest + "; toolc resolves " + schema.ImportPath + " itself, and other imports from the contract's own CUE module"
	}
	return msg
}
