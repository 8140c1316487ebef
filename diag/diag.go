// Package diag holds toolc's diagnostics: plain data with a position, a rule
// ID, a severity and a message, and the one printer that renders a list of
// them as text, JSON or GitHub Actions annotations. Every positioned
// problem toolc reports goes through it: the rules of toolc check, the
// changes that toolc diff and toolc lock find (Diagnostic.Change), and the
// names that toolc gen go cannot use (a List, returned as an error).
//
// Checks build Diagnostic values and never print; Print renders them
// afterwards. Positions are 1-based, and 0 means unknown.
//
// Text for a terminal goes through Printable (Print's text format does, and
// NewPrintableWriter does for a whole stream): contract text is someone
// else's, and a terminal must show it rather than act on it.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity says whether a diagnostic fails the run.
type Severity int

const (
	// Error fails `toolc check` with exit status 1.
	Error Severity = iota
	// Warning is reported, but the run still succeeds.
	Warning
	// Notice is for information, such as a compatible change that toolc
	// diff reports; no rule of toolc check has it.
	Notice
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Notice:
		return "notice"
	}
	return "error"
}

// MarshalText encodes the severity as "error", "warning" or "notice".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Position is a place in a source file. Line and Column are 1-based; 0
// means unknown. File is as the user should see it: relative to the working
// directory when it is below it.
type Position struct {
	File   string
	Line   int
	Column int
}

func (p Position) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// Diagnostic is one problem found in a contract, or one change to it.
type Diagnostic struct {
	Pos      Position
	Severity Severity
	// Rule is the ID of the rule or the kind of change; it may be empty
	// for a problem that no rule names (a name Go cannot use).
	Rule    string
	Message string
	// Change is set when the diagnostic reports a change to a contract
	// since its lock (toolc diff, toolc lock), rather than a problem in
	// it. The zero Change is no change.
	Change Change
	// Acknowledged is set on a warning that a `// toolc:ignore RULE
	// REASON` comment acknowledges, and Reason holds the comment's reason.
	// Text and GitHub output leave such a warning out, and Count does not
	// count it; JSON keeps it, marked.
	Acknowledged bool
	Reason       string
}

// Change describes the change that a Diagnostic reports. The text format
// names its Kind where other diagnostics name their severity, and the
// JSON format gives its fields rather than the severity.
type Change struct {
	// Kind is "breaking", "allowed" (breaking, but allowed by a major
	// version bump), "compatible", or "accepted" (a breaking change that
	// toolc lock accepted); "" for no change.
	Kind              string
	Breaking, Allowed bool
	// Service, Tool and Field name what changed; Field is empty for a
	// change to a tool or a service.
	Service, Tool, Field string
	// Tokens, on a change of what a tool or a request costs in tokens
	// (the token-growth lines of toolc diff), are its counts before and
	// after, per target. A pointer, so that a Diagnostic stays comparable.
	Tokens *TokenCounts
}

// TokenCounts are a change's counts, one per target.
type TokenCounts []TokenCount

// TokenCount is what a tool, or a request, costs in one target's tokens
// before and after a change.
type TokenCount struct {
	// Target is a projection target, or "openai" for openai-chat and
	// openai-responses, which cost the same.
	Target string `json:"target"`
	Before int    `json:"before"`
	After  int    `json:"after"`
	// Estimate says that the counts are estimates: the provider publishes
	// no tokenizer.
	Estimate bool `json:"estimate,omitempty"`
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if s := d.Pos.String(); s != "" {
		b.WriteString(s + ": ")
	}
	if d.Change.Kind != "" {
		b.WriteString(d.Change.Kind)
	} else {
		b.WriteString(d.Severity.String())
	}
	b.WriteString(": " + d.Message)
	if d.Rule != "" {
		b.WriteString(" [" + d.Rule + "]")
	}
	return b.String()
}

// List is diagnostics as an error: what a package that finds problems at
// positions returns, and Print prints.
type List []Diagnostic

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders diagnostics by file, line, column, rule and message, so that
// output does not depend on the order in which checks ran.
func Sort(ds []Diagnostic) {
	slices.SortStableFunc(ds, compare)
}

// Compact removes adjacent duplicates from sorted diagnostics.
func Compact(ds []Diagnostic) []Diagnostic {
	return slices.CompactFunc(ds, func(a, b Diagnostic) bool { return a == b })
}

func compare(a, b Diagnostic) int {
	return cmp.Or(
		cmp.Compare(a.Pos.File, b.Pos.File),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Column, b.Pos.Column),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
	)
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(ds []Diagnostic) bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}

// Count returns the number of errors and of warnings that no comment
// acknowledges.
func Count(ds []Diagnostic) (errors, warnings int) {
	for _, d := range ds {
		switch {
		case d.Severity == Error:
			errors++
		case d.Severity == Warning && !d.Acknowledged:
			warnings++
		}
	}
	return errors, warnings
}

// Acknowledged returns the number of acknowledged warnings.
func Acknowledged(ds []Diagnostic) int {
	n := 0
	for _, d := range ds {
		if d.Acknowledged {
			n++
		}
	}
	return n
}

// Split separates the errors from the warnings (and notices), and leaves
// out the acknowledged warnings.
func Split(ds []Diagnostic) (errs, warns []Diagnostic) {
	for _, d := range ds {
		switch {
		case d.Severity == Error:
			errs = append(errs, d)
		case !d.Acknowledged:
			warns = append(warns, d)
		}
	}
	return errs, warns
}

// WarningSummary is the one line that commands other than toolc check
// print instead of their warnings, which every run would otherwise repeat
// (and stdio clients relay to users): "7 warnings [provider-limit]; run
// toolc check for details". It is "" when there are none.
func WarningSummary(warns []Diagnostic) string {
	if len(warns) == 0 {
		return ""
	}
	var rules []string
	for _, d := range warns {
		rules = append(rules, d.Rule)
	}
	slices.Sort(rules)
	noun := "warnings"
	if len(warns) == 1 {
		noun = "warning"
	}
	return fmt.Sprintf("%d %s [%s]; run toolc check for details", len(warns), noun, strings.Join(slices.Compact(rules), ", "))
}
