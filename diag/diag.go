// Package diag holds toolc's diagnostics: plain data with a position, a rule
// ID, a severity and a message, and the printers that render a list of them
// as text, JSON or GitHub Actions annotations.
//
// Checks build Diagnostic values and never print; a Printer renders them
// afterwards. Positions are 1-based, and 0 means unknown.
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
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText encodes the severity as "error" or "warning".
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

// Diagnostic is one problem found in a contract.
type Diagnostic struct {
	Pos      Position
	Severity Severity
	Rule     string
	Message  string
}

func (d Diagnostic) String() string {
	if s := d.Pos.String(); s != "" {
		return fmt.Sprintf("%s: %s: %s [%s]", s, d.Severity, d.Message, d.Rule)
	}
	return fmt.Sprintf("%s: %s [%s]", d.Severity, d.Message, d.Rule)
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

// Count returns the number of errors and warnings.
func Count(ds []Diagnostic) (errors, warnings int) {
	for _, d := range ds {
		if d.Severity == Error {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// Split separates the errors from the warnings.
func Split(ds []Diagnostic) (errs, warns []Diagnostic) {
	for _, d := range ds {
		if d.Severity == Error {
			errs = append(errs, d)
		} else {
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
