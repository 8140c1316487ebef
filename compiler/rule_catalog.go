package compiler

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/validate"
)

// A place is where a name is declared, for messages that name both places.
type place struct {
	p       *Pass
	service string
	tool    string
	pos     token.Pos
}

func (pl place) String() string {
	at := pl.p.position(pl.pos).String()
	switch {
	case pl.tool == "":
		return fmt.Sprintf("%s (service %q)", at, pl.service)
	case pl.service == "": // a service whose name is missing or broken
		return fmt.Sprintf("%s (tool %q)", at, pl.tool)
	}
	return fmt.Sprintf("%s (tool %q of service %q)", at, pl.tool, pl.service)
}

// reportCollisions reports every place that shares a key with another,
// naming the other places, so that each file involved gets a diagnostic.
func reportCollisions(p *Pass, keys []string, byKey map[string][]place, msg func(key string, here place, others []place) string) {
	for _, key := range keys {
		// A file that CUE merges into the package of a subdirectory, one
		// with the same package name, declares its tools in both packages:
		// one declaration, not a collision.
		var places []place
		for _, pl := range byKey[key] {
			if !slices.ContainsFunc(places, func(o place) bool { return p.position(o.pos) == p.position(pl.pos) }) {
				places = append(places, pl)
			}
		}
		if len(places) < 2 {
			continue
		}
		for i, here := range places {
			others := append(append([]place(nil), places[:i]...), places[i+1:]...)
			p.Reportf(here.pos, "%s", msg(key, here, others))
		}
	}
}

func joinPlaces(ps []place) string {
	s := make([]string, len(ps))
	for i, pl := range ps {
		s[i] = pl.String()
	}
	return strings.Join(s, " and ")
}

// UniqueNameRule requires function names, which are tool names as they
// are, to be unique across the catalog: a provider request with two tools
// of one name is rejected or, worse, silently keeps one.
var UniqueNameRule = &Rule{
	ID:       "unique-name",
	Doc:      "function names are unique across the catalog; a duplicate names both places",
	Severity: diag.Error,
	Check: func(p *Pass) {
		tools, services := map[string][]place{}, map[string][]place{}
		var toolKeys, serviceKeys []string
		for s := range p.services() {
			svc := s.name()
			if svc != "" {
				if services[svc] == nil {
					serviceKeys = append(serviceKeys, svc)
				}
				services[svc] = append(services[svc], place{p, svc, "", s.root.get("name").pos})
			}
			for _, t := range s.root.get("tools").structFields() {
				if tools[t.label] == nil {
					toolKeys = append(toolKeys, t.label)
				}
				tools[t.label] = append(tools[t.label], place{p, svc, t.label, t.pos})
			}
		}
		reportCollisions(p, serviceKeys, services, func(name string, _ place, others []place) string {
			return fmt.Sprintf("service name %q is also used at %s; service names must be unique", name, joinPlaces(others))
		})
		reportCollisions(p, toolKeys, tools, func(name string, _ place, others []place) string {
			return fmt.Sprintf("tool %q is also declared at %s; function names must be unique across the catalog: rename one", name, joinPlaces(others))
		})
	},
}

var mcpNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// MCPNameRule checks the names that MCP clients see: service and tool
// joined, or the name pinned with mcp.name.
var MCPNameRule = &Rule{
	ID:       "mcp-name",
	Doc:      "exposed MCP names are valid (letters, digits, _ and -, at most 64) and unique",
	Severity: diag.Error,
	Check: func(p *Pass) {
		byName := map[string][]place{}
		var keys []string
		pinned := map[string]bool{}
		for t := range p.tools() {
			svc := t.name()
			if t.node.kind != kStruct {
				continue
			}
			name := catalog.MCPName(svc, t.node.label)
			pos := t.node.pos
			if pin := t.node.get("mcp").get("name"); pin != nil {
				if pin.kind != kString {
					// The schema rule leaves the key to this rule, and
					// reports only values that are not concrete.
					if pin.kind != kError && pin.kind != kIncomplete {
						p.Reportf(pin.pos, "MCP name of tool %q must be a string, not %s", t.node.label, pin.kind)
					}
					continue
				}
				name, pos = pin.str, pin.pos
				if !mcpNameRE.MatchString(name) {
					long := ""
					if n := utf8.RuneCountInString(name); n > catalog.MaxMCPName {
						long = fmt.Sprintf("; it has %d", n)
					}
					p.Reportf(pin.pos, "MCP name %q of tool %q must be 1 to 64 letters, digits, underscores or hyphens%s", name, t.node.label, long)
					continue
				}
				pinned[name] = true
			} else if svc == "" {
				continue
			}
			if byName[name] == nil {
				keys = append(keys, name)
			}
			byName[name] = append(byName[name], place{p, svc, t.node.label, pos})
		}
		// Derived names that collide because the tool names are the same
		// are unique-name's to report: renaming the tool fixes both.
		keys = slices.DeleteFunc(keys, func(name string) bool {
			places := byName[name]
			return !pinned[name] && !slices.ContainsFunc(places, func(pl place) bool { return pl.tool != places[0].tool })
		})
		reportCollisions(p, keys, byName, func(name string, _ place, others []place) string {
			return fmt.Sprintf("MCP name %q is also the MCP name of %s; pin a different one with mcp: name: \"...\"", name, joinPlaces(others))
		})
	},
}

// applies reports whether a constraint fits the field's type: where it
// does not, bounds reports an error, and a warning about how a provider
// projects it would be noise.
func applies(key string, f *catalog.Field) bool {
	return contains(constraintTypes[key], string(f.Type))
}

// Provider limits that toolc warns about.
const (
	openAIMaxDescription = 1024
	openAIMaxTools       = 128
)

// openAIStrictFormats are the string formats that OpenAI's strict mode
// accepts.
var openAIStrictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// ProviderLimitRule warns where a projection has to drop or reshape
// something for one provider, so that the loss is a decision, not a
// surprise.
var ProviderLimitRule = &Rule{
	ID:       "provider-limit",
	Doc:      "warns where a target drops or reshapes something (OpenAI's 1024-character tool descriptions and 128 tools, the strict modes, Gemini's subset)",
	Severity: diag.Warning,
	Check: func(p *Pass) {
		targets := p.targets
		if targets == nil {
			targets = catalog.Targets()
		}
		openAI := slices.Contains(targets, catalog.OpenAIChat) || slices.Contains(targets, catalog.OpenAIResponses)
		count := 0
		for t := range p.tools() {
			count++
			if !openAI {
				break
			}
			if count == openAIMaxTools+1 {
				p.Reportf(t.node.pos, "the catalog has more than %d tools, OpenAI's limit per request; send a subset with an allowlist (toolc export --tools)", openAIMaxTools)
			}
			if d := t.node.get("description"); d != nil && d.kind == kString && utf8.RuneCountInString(d.str) > openAIMaxDescription {
				p.Reportf(d.pos, "description of tool %q has %d characters; OpenAI accepts at most %d, so the OpenAI projections cut it to %d", t.node.label, utf8.RuneCountInString(d.str), openAIMaxDescription, openAIMaxDescription)
			}
		}
		for f := range p.fields() {
			if f.message != "request" || f.node.kind != kStruct {
				continue
			}
			fld := lowerer{}.field(f.node)
			var order []string
			dialects := map[string][]string{}
			for _, r := range fld.Reshapes(targets, p.strict || boolAt(f.tool.node, "strict")) {
				if _, bounded := constraintTypes[r.Keyword]; bounded && !applies(r.Keyword, fld) || r.Keyword == "format" && !contains(validate.Formats(), fld.Format) {
					continue // the bounds rule reports a keyword that does not fit at all
				}
				if r.Keyword == "enum" && fld.Type != catalog.String && fld.Type != catalog.Integer {
					continue // the enum rule rejects it
				}
				if r.Keyword == "format" && r.Target == "Gemini" {
					// Gemini constrains no format but date-time; the format
					// in the description tells the model all it would have.
					continue
				}
				if dialects[r.Keyword] == nil {
					order = append(order, r.Keyword)
				}
				dialects[r.Keyword] = append(dialects[r.Keyword], r.Target)
			}
			for _, key := range order {
				enforced := ""
				if key != "examples" {
					enforced = ", and the runtime still enforces it"
					if key == "default" {
						enforced = ", and the runtime still applies it"
					}
				}
				p.Reportf(f.node.get(key).pos, "%s cannot express %s on %s; %s it in the description instead%s",
					joinAnd(dialects[key]), key, f.describe(), projectionsState(len(dialects[key])), enforced)
			}
		}
	},
}

func joinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func projectionsState(n int) string {
	if n == 1 {
		return "its projection states"
	}
	return "their projections state"
}
