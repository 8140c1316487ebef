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
			p.reportf(here.pos, "%s", msg(key, here, others))
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

// uniqueNameRule requires the names that a client can call to be unique
// across the catalog: function names, which are tool names as they are (a
// provider request with two tools of one name is rejected or, worse,
// silently keeps one), and function names against MCP names, since toolc
// answers a call to either (a call meant for one tool would run another).
// MCP names against each other are mcp-name's.
var uniqueNameRule = &Rule{
	ID:       "unique-name",
	Doc:      "names a client can call are unique across the catalog: function names, and function names against MCP names; prompt and resource names and resource URIs; a duplicate names both places",
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
		reportCrossNames(p, toolKeys, tools)
		reportEntryCollisions(p)
	},
}

// joinEntries names places of prompts or resources, as joinPlaces names
// tools.
func joinEntries(ps []place, kind string) string {
	s := make([]string, len(ps))
	for i, pl := range ps {
		s[i] = fmt.Sprintf("%s (%s %q of service %q)", pl.p.position(pl.pos), kind, pl.tool, pl.service)
	}
	return strings.Join(s, " and ")
}

// reportEntryCollisions reports prompts and resources that share a name,
// and resources that share a uri or a uriTemplate, across the catalog: MCP
// lists them under one server, by name and by URI, with no service prefix.
func reportEntryCollisions(p *Pass) {
	for _, kind := range []struct{ key, what string }{{"prompts", "prompt"}, {"resources", "resource"}, {"skills", "skill"}} {
		byName := map[string][]place{}
		var keys []string
		for e := range p.entries(kind.key) {
			if byName[e.node.label] == nil {
				keys = append(keys, e.node.label)
			}
			byName[e.node.label] = append(byName[e.node.label], place{p, e.name(), e.node.label, e.node.pos})
		}
		reportCollisions(p, keys, byName, func(name string, _ place, others []place) string {
			return fmt.Sprintf("%s %q is also declared at %s; MCP clients ask for %ss by name, so names must be unique across the catalog: rename one", kind.what, name, joinEntries(others, kind.what), kind.what)
		})
	}
	byURI := map[string][]place{}
	var uris []string
	for e := range p.entries("resources") {
		for _, k := range []string{"uri", "uriTemplate"} {
			if u := e.node.get(k); u != nil && u.kind == kString {
				if byURI[u.str] == nil {
					uris = append(uris, u.str)
				}
				byURI[u.str] = append(byURI[u.str], place{p, e.name(), e.node.label, u.pos})
			}
		}
	}
	reportCollisions(p, uris, byURI, func(uri string, _ place, others []place) string {
		return fmt.Sprintf("%q is also the URI of %s; a client reads a resource by its URI, so URIs must be unique across the catalog", uri, joinEntries(others, "resource"))
	})
}

// reportCrossNames reports function names that are another tool's MCP
// name, at both places: the tool, and the other tool's MCP name (its
// mcp.name, or the tool when the name is derived).
func reportCrossNames(p *Pass, names []string, byFunction map[string][]place) {
	type exposed struct {
		place
		decl token.Pos // the tool's declaration
	}
	byMCP := map[string][]exposed{}
	for t := range p.tools() {
		if name, pos, ok := exposedMCPName(t); ok {
			byMCP[name] = append(byMCP[name], exposed{place{p, t.name(), t.node.label, pos}, t.node.pos})
		}
	}
	// A tool declared in a file that CUE merges into two packages is one
	// tool, at one position.
	same := func(a, b token.Pos) bool { return p.position(a) == p.position(b) }
	const unique = "a client can call a tool by either name, so function names and MCP names must be unique together, or a call meant for one tool runs another"
	for _, name := range names {
		var fns []place
		for _, f := range byFunction[name] {
			if !slices.ContainsFunc(fns, func(o place) bool { return same(o.pos, f.pos) }) {
				fns = append(fns, f)
			}
		}
		var mcps []exposed
		for _, m := range byMCP[name] {
			if !slices.ContainsFunc(mcps, func(o exposed) bool { return same(o.pos, m.pos) }) {
				mcps = append(mcps, m)
			}
		}
		for _, f := range fns {
			var others []place
			for _, m := range mcps {
				if !same(m.decl, f.pos) {
					others = append(others, m.place)
				}
			}
			if len(others) > 0 {
				p.reportf(f.pos, "tool %q can be called by its function name %q, which is also the MCP name of %s; %s: rename this tool, or pin another MCP name on the other one with mcp: name: \"...\"", name, name, joinPlaces(others), unique)
			}
		}
		for _, m := range mcps {
			var others []place
			for _, f := range fns {
				if !same(m.decl, f.pos) {
					others = append(others, f)
				}
			}
			if len(others) > 0 {
				p.reportf(m.pos, "MCP name %q of tool %q is also the function name of %s; %s: pin another MCP name with mcp: name: \"...\", or rename the other tool", name, m.tool, joinPlaces(others), unique)
			}
		}
	}
}

// exposedMCPName returns the name under which MCP clients see a tool, and
// where it is written: its mcp.name, or at the tool the name derived from
// the service's and the tool's. ok is false while it has none: a pinned
// name that is not a valid one (mcp-name reports it), or no service name.
func exposedMCPName(t tool) (name string, pos token.Pos, ok bool) {
	if t.node.kind != kStruct {
		return "", token.NoPos, false
	}
	if pin := t.node.get("mcp").get("name"); pin != nil {
		if pin.kind != kString || !mcpNameRE.MatchString(pin.str) {
			return "", token.NoPos, false
		}
		return pin.str, pin.pos, true
	}
	if t.name() == "" {
		return "", token.NoPos, false
	}
	return catalog.MCPName(t.name(), t.node.label), t.node.pos, true
}

var mcpNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// mcpNameRule checks the names that MCP clients see: service and tool
// joined, or the name pinned with mcp.name.
var mcpNameRule = &Rule{
	ID:       "mcp-name",
	Doc:      "exposed MCP names are valid (letters, digits, _ and -, at most 64) and unique",
	Severity: diag.Error,
	Check: func(p *Pass) {
		byName := map[string][]place{}
		var keys []string
		pinned := map[string]bool{}
		for t := range p.tools() {
			if t.node.kind != kStruct {
				continue
			}
			if pin := t.node.get("mcp").get("name"); pin != nil {
				switch {
				case pin.kind != kString:
					// The schema rule leaves the key to this rule, and
					// reports only values that are not concrete.
					if pin.kind != kError && pin.kind != kIncomplete {
						p.reportf(pin.pos, "MCP name of tool %q must be a string, not %s", t.node.label, pin.kind)
					}
				case !mcpNameRE.MatchString(pin.str):
					long := ""
					if n := utf8.RuneCountInString(pin.str); n > catalog.MaxMCPName {
						long = fmt.Sprintf("; it has %d", n)
					}
					p.reportf(pin.pos, "MCP name %q of tool %q must be 1 to 64 letters, digits, underscores or hyphens%s", pin.str, t.node.label, long)
				default:
					pinned[pin.str] = true
				}
			}
			name, pos, ok := exposedMCPName(t)
			if !ok {
				continue
			}
			svc := t.name()
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

// providerLimitRule warns where a projection has to drop or reshape
// something for one provider, so that the loss is a decision, not a
// surprise: for the targets given (nil means every target, as toolc check
// has it; toolc export passes the one it prints), and as if every tool were
// strict when strict is set (toolc export --strict), else as each tool says.
func providerLimitRule(targets []catalog.Target, strict bool) *Rule {
	return &Rule{
		ID:       "provider-limit",
		Doc:      "warns where a target drops or reshapes something (OpenAI's 1024-character tool descriptions and 128 tools, the strict modes, Gemini's subset)",
		Severity: diag.Warning,
		Check:    func(p *Pass) { checkProviderLimits(p, targets, strict) },
	}
}

func checkProviderLimits(p *Pass, targets []catalog.Target, strict bool) {
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
			p.reportf(t.node.pos, "the catalog has more than %d tools, OpenAI's limit per request; send a subset with an allowlist (toolc export --tools)", openAIMaxTools)
		}
		if d := t.node.get("description"); d != nil && d.kind == kString && utf8.RuneCountInString(d.str) > openAIMaxDescription {
			p.reportf(d.pos, "description of tool %q has %d characters; OpenAI accepts at most %d, so the OpenAI projections cut it to %d", t.node.label, utf8.RuneCountInString(d.str), openAIMaxDescription, openAIMaxDescription)
		}
	}
	for f := range p.fields() {
		if f.message != "request" || f.node.kind != kStruct {
			continue
		}
		fld := lowerer{}.field(f.node)
		if fld.Type == catalog.JSON {
			continue // free-form says what its projections do
		}
		var order []string
		dialects := map[string][]string{}
		for _, r := range fld.Reshapes(targets, strict || boolAt(f.tool.node, "strict")) {
			if _, bounded := constraintTypes[r.Keyword]; bounded && !applies(r.Keyword, fld) || r.Keyword == "format" && !contains(validate.Formats(), fld.Format) {
				continue // the bounds rule reports a keyword that does not fit at all
			}
			if r.Keyword == "enum" && fld.Type != catalog.String && fld.Type != catalog.Integer {
				continue // the enum rule rejects it
			}
			if fld.IsRecord() && (r.Keyword == "uniqueItems" || r.Keyword == "default") {
				continue // the bounds and default rules reject it
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
			p.reportf(f.node.get(key).pos, "%s cannot express %s on %s; %s it in the description instead%s",
				joinAnd(dialects[key]), key, f.describe(), projectionsState(len(dialects[key])), enforced)
		}
	}
	checkDeferralLimits(p, targets)
}

// openAINamespaceAdvice is the most functions OpenAI advises a namespace
// to hold: "fewer than 10".
const openAINamespaceAdvice = 9

// checkDeferralLimits warns, once, that the targets without deferred
// loading reach deferred tools through toolc's own tools, and about
// groups larger than OpenAI advises namespaces to be.
func checkDeferralLimits(p *Pass, targets []catalog.Target) {
	var lacking []string
	for _, t := range []struct {
		target catalog.Target
		name   string
	}{{catalog.OpenAIChat, "OpenAI Chat Completions"}, {catalog.Gemini, "Gemini"}, {catalog.Bedrock, "Bedrock"}} {
		if slices.Contains(targets, t.target) {
			lacking = append(lacking, t.name)
		}
	}
	warned := false
	for s := range p.services() {
		size := map[string]int{}
		for _, t := range s.root.get("tools").structFields() {
			if g := t.get("group"); g != nil && g.kind == kString {
				size[g.str]++
			}
			if where, ok := deferredAt(s, t); ok && !warned && len(lacking) > 0 {
				warned = true
				p.reportf(where.pos, "%s %s no deferred loading: %s the tools loaded up front and toolc's %s and %s, through which a model finds and calls the deferred tools (toolc serves both: /v1/call, toolcalls, MCP)",
					joinAnd(lacking), hasHave(len(lacking)), projectionsCarry(len(lacking)), catalog.SearchToolName, catalog.CallToolName)
			}
		}
		if !slices.Contains(targets, catalog.OpenAIResponses) {
			continue
		}
		for _, g := range s.root.get("groups").structFields() {
			if n := size[g.label]; n > openAINamespaceAdvice {
				p.reportf(g.pos, "group %q has %d tools; OpenAI advises fewer than 10 functions per namespace, which the OpenAI Responses projection makes of it: split it", g.label, n)
			}
		}
	}
}

// deferredAt reports whether a tool is deferred, and the key that says
// so: its own defer, or its group's.
func deferredAt(s service, t *node) (*node, bool) {
	if d := t.get("defer"); d != nil && d.kind == kBool {
		return d, d.b
	}
	if g := t.get("group"); g != nil && g.kind == kString {
		if d := s.root.get("groups").get(g.str).get("defer"); d != nil && d.kind == kBool {
			return d, d.b
		}
	}
	return nil, false
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func projectionsCarry(n int) string {
	if n == 1 {
		return "its projection carries"
	}
	return "their projections carry"
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
