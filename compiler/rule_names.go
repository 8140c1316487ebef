package compiler

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolc/toolc/diag"
)

var (
	serviceNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)
	wireNameRE    = regexp.MustCompile(`^([a-z][a-z0-9_]{0,63}|[a-z][a-zA-Z0-9]{0,63})$`)
	toolNameRE    = regexp.MustCompile(`^[a-z][a-zA-Z0-9_-]{0,63}$`)
	semver        = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// serviceNameRule checks the service name, which prefixes every MCP name.
var serviceNameRule = &Rule{
	ID:       "service-name",
	Doc:      "service name format: lower-case letters, digits and hyphens, starting with a letter, at most 64 characters",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			n := s.root.get("name")
			switch {
			case n == nil:
				if len(s.pkg.loadErrs) == 0 {
					p.reportf(s.root.pos, "service has no name; add name: %q", suggestName(pathBase(s.pkg.Dir), '-'))
				}
			case n.kind == kString && !serviceNameRE.MatchString(n.str):
				p.reportf(n.pos, "service name %q must be lower-case letters, digits and hyphens, start with a letter and be at most 64 characters%s",
					n.str, try(n.str, suggestName(n.str, '-')))
			case n.kind != kString && n.kind != kError && n.kind != kIncomplete:
				p.reportf(n.pos, "service name must be a string, not %s", n.kind)
			}
		}
	},
}

// toolNameRule checks tool names, which models see as function names: a
// lower-case letter, then letters, digits, underscores and hyphens, which
// OpenAI, Anthropic, Gemini, Bedrock and MCP all accept.
var toolNameRule = &Rule{
	ID:       "tool-name",
	Doc:      "tool name format: a lower-case letter, then letters, digits, underscores or hyphens, at most 64 characters, which every target accepts",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for t := range p.tools() {
			name := t.node.label
			if toolNameRE.MatchString(name) {
				continue
			}
			keep := ""
			if mcpNameRE.MatchString(name) && t.node.get("mcp").get("name") == nil {
				// A port of an MCP server whose clients call this name.
				keep = fmt.Sprintf("; to keep the name MCP clients call, add mcp: name: %q to the renamed tool", name)
			}
			p.reportf(t.node.pos, "tool name %q must start with a lower-case letter and hold only letters, digits, underscores and hyphens, at most 64 characters%s%s",
				name, tryRename(name, suggestName(name, '_'), "models, prompts and clients that call "+strconv.Quote(name)+" must change too"), keep)
		}
	},
}

// fieldNameRule checks field names, which are the parameter names on the
// wire: snake_case or lowerCamelCase, as real servers name them (GitHub's
// perPage, Playwright's doubleClick). A tool that mixes the two draws a
// warning.
var fieldNameRule = &Rule{
	ID:       "field-name",
	Doc:      "field name format: snake_case or lowerCamelCase, starting with a lower-case letter, at most 64 characters; mixing the two in one tool is a warning",
	Severity: diag.Error,
	Warns:    true,
	Check: func(p *Pass) {
		// first is the first field of each style in each message, by tool
		// and message.
		type key struct {
			tool    *node
			message string
		}
		first := map[key]map[string]*node{}
		for f := range p.fields() {
			name := f.node.label
			if !wireNameRE.MatchString(name) {
				p.reportf(f.node.pos, "%s field name %q must be snake_case or lowerCamelCase: a lower-case letter, then lower-case letters, digits and underscores, or letters and digits, at most 64 characters%s",
					f.message, name, tryRename(name, suggestName(name, '_'), "calls that send "+strconv.Quote(name)+" are rejected"))
				continue
			}
			style := nameStyle(name)
			if style == "" {
				continue // one word: both styles
			}
			k := key{f.tool.node, f.message}
			if first[k] == nil {
				first[k] = map[string]*node{}
			}
			if first[k][style] == nil {
				first[k][style] = f.node
			}
			other := "snake_case"
			if style == other {
				other = "lowerCamelCase"
			}
			if o := first[k][other]; o != nil && first[k][style] == f.node {
				p.warnf(f.node.pos, "%s is %s, but %s field %q of the same tool is %s; one style per tool is easier for a model to follow (rename only before clients depend on the names)",
					f.describe(), style, f.message, o.label, other)
			}
		}
	},
}

// nameStyle is "snake_case" for a name with an underscore,
// "lowerCamelCase" for one with a capital, and "" for one word.
func nameStyle(name string) string {
	switch {
	case strings.Contains(name, "_"):
		return "snake_case"
	case strings.ToLower(name) != name:
		return "lowerCamelCase"
	}
	return ""
}

// tryRename suggests a valid name, warning that the rename changes the
// wire contract, with what breaks.
func tryRename(name, suggestion, breaks string) string {
	if t := try(name, suggestion); t != "" {
		return t + " (a rename changes the wire contract: " + breaks + ")"
	}
	return ""
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
