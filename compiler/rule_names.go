package compiler

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/toolc/toolc/diag"
)

var (
	serviceNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)
	wireNameRE    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	semver        = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// ServiceNameRule checks the service name, which prefixes every MCP name.
var ServiceNameRule = &Rule{
	ID:       "service-name",
	Doc:      "service name format: lower-case letters, digits and hyphens, starting with a letter, at most 64 characters",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			n := s.root.get("name")
			switch {
			case n == nil:
				if len(s.pkg.loadErrs) == 0 {
					p.Reportf(s.root.pos, "service has no name; add name: %q", suggestName(pathBase(s.pkg.Dir), '-'))
				}
			case n.kind == kString && !serviceNameRE.MatchString(n.str):
				p.Reportf(n.pos, "service name %q must be lower-case letters, digits and hyphens, start with a letter and be at most 64 characters%s",
					n.str, try(n.str, suggestName(n.str, '-')))
			case n.kind != kString && n.kind != kError && n.kind != kIncomplete:
				p.Reportf(n.pos, "service name must be a string, not %s", n.kind)
			}
		}
	},
}

// ToolNameRule checks tool names, which models see as function names.
var ToolNameRule = &Rule{
	ID:       "tool-name",
	Doc:      "tool name format: snake_case, starting with a letter, at most 64 characters",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for t := range p.tools() {
			if name := t.node.label; !wireNameRE.MatchString(name) {
				p.Reportf(t.node.pos, "tool name %q must be snake_case: lower-case letters, digits and underscores, starting with a letter, at most 64 characters%s",
					name, try(name, suggestName(name, '_')))
			}
		}
	},
}

// FieldNameRule checks field names, which are the parameter names on the
// wire.
var FieldNameRule = &Rule{
	ID:       "field-name",
	Doc:      "field name format: snake_case, starting with a letter, at most 64 characters",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for f := range p.fields() {
			if name := f.node.label; !wireNameRE.MatchString(name) {
				p.Reportf(f.node.pos, "%s field name %q must be snake_case: lower-case letters, digits and underscores, starting with a letter, at most 64 characters%s",
					f.message, name, try(name, suggestName(name, '_')))
			}
		}
	},
}

func try(name, suggestion string) string {
	if suggestion == "" || suggestion == name {
		return ""
	}
	return "; try \"" + suggestion + "\""
}

// suggestName turns QueryWeather, query-weather or "Query Weather" into
// query_weather (sep '_') or query-weather (sep '-'), or returns "" when
// nothing valid comes out.
func suggestName(s string, sep rune) string {
	var b strings.Builder
	prevLower := false
	for _, r := range s {
		switch {
		case unicode.IsUpper(r) && r < unicode.MaxASCII:
			if prevLower {
				b.WriteRune(sep)
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			prevLower = true
		default:
			b.WriteRune(sep)
			prevLower = false
		}
	}
	out := b.String()
	for strings.Contains(out, string(sep)+string(sep)) {
		out = strings.ReplaceAll(out, string(sep)+string(sep), string(sep))
	}
	out = strings.Trim(out, string(sep))
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], string(sep))
	}
	re := wireNameRE
	if sep == '-' {
		re = serviceNameRE
	}
	if !re.MatchString(out) {
		return ""
	}
	return out
}

func pathBase(dir string) string {
	dir = strings.TrimRight(strings.ReplaceAll(dir, "\\", "/"), "/")
	return dir[strings.LastIndex(dir, "/")+1:]
}
