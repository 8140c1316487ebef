package compiler

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
)

// groupRule checks groups and deferred loading: a service's groups:
// {name: {description, defer?}}, each named as a namespace may be and
// unique across the catalog (an OpenAI Responses request holds every
// service's namespaces); a tool's group: naming one of its service's
// groups; and, once a tool is deferred, no tool under the names of the
// tools that toolc serves to reach deferred ones.
var groupRule = &Rule{
	ID:       "group",
	Doc:      "groups: have a name a namespace may have, unique across the catalog, and a description; a tool's group: is one of its service's groups; a deferred catalog leaves toolc's search and call tools' names free",
	Severity: diag.Error,
	Check: func(p *Pass) {
		groups := map[string][]place{}
		var groupKeys []string
		deferred := false
		for s := range p.services() {
			declared := map[string]bool{}
			if g := s.root.get("groups"); g != nil {
				if g.kind != kStruct {
					p.reportf(g.pos, "groups of service %q must be a struct of groups such as {billing: {description: \"Invoices and payments\"}}, not %s", s.name(), g.kind)
				}
				for _, n := range g.structFields() {
					declared[n.label] = true
					checkGroup(p, s, n)
					if groups[n.label] == nil {
						groupKeys = append(groupKeys, n.label)
					}
					groups[n.label] = append(groups[n.label], place{p, s.name(), "", n.pos})
					deferred = deferred || boolAt(n, "defer")
				}
			}
			used := map[string]bool{}
			for _, t := range s.root.get("tools").structFields() {
				deferred = deferred || boolAt(t, "defer")
				g := t.get("group")
				if g == nil {
					continue
				}
				if g.kind != kString {
					p.reportf(g.pos, "group of tool %q must be the name of one of the service's groups, a string, not %s", t.label, g.kind)
					continue
				}
				used[g.str] = true
				if !declared[g.str] {
					names := slices.Sorted(func(yield func(string) bool) {
						for k := range declared {
							if !yield(k) {
								return
							}
						}
					})
					p.reportf(g.pos, "tool %q is in group %q, which service %q does not declare%s; declare it in groups: %s: {description: \"...\"}", t.label, g.str, s.name(), suggest(g.str, names), g.str)
				}
			}
			for _, n := range s.root.get("groups").structFields() {
				if !used[n.label] {
					p.warnf(n.pos, "group %q of service %q has no tools; add group: %q to its tools, or drop it", n.label, s.name(), n.label)
				}
			}
		}
		reportCollisions(p, groupKeys, groups, func(key string, here place, others []place) string {
			return fmt.Sprintf("group %q is also declared at %s; group names are unique across the catalog, as a request holds every service's groups: rename one", key, joinPlaces(others))
		})
		if !deferred {
			return
		}
		for t := range p.tools() {
			mcp := t.node.get("mcp").get("name")
			for _, name := range []string{catalog.SearchToolName, catalog.CallToolName} {
				if t.node.label == name || mcp != nil && mcp.kind == kString && mcp.str == name {
					p.reportf(t.node.pos, "tool %q of service %q takes the name %q, which toolc gives its own tool for reaching the deferred tools of the catalog: rename it", t.node.label, t.name(), name)
				}
			}
		}
	},
}

var groupName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func checkGroup(p *Pass, s service, n *node) {
	where := fmt.Sprintf("group %q of service %q", n.label, s.name())
	if !groupName.MatchString(n.label) {
		p.reportf(n.pos, "%s must be named with a lower-case letter, then lower-case letters, digits and underscores, at most 64 characters, as every target takes a namespace's name; try %q", where, suggestGroupName(n.label))
	}
	if n.kind != kStruct {
		p.reportf(n.pos, "%s must be a struct such as {description: \"Invoices and payments\", defer: true}, not %s", where, n.kind)
		return
	}
	for _, k := range n.fields {
		switch k.label {
		case "description":
			if k.kind != kString || strings.TrimSpace(k.str) == "" {
				p.reportf(k.pos, "description of %s must say what its tools are for: a model that sees the group, not its tools, reads it to decide whether to look inside", where)
			}
		case "defer":
			if k.kind != kBool {
				p.reportf(k.pos, "defer of %s must be true or false, not %s", where, k.kind)
			}
		default:
			p.reportf(k.pos, "unknown key %q in %s%s; a group has description and defer", k.label, where, suggest(k.label, []string{"description", "defer"}))
		}
	}
	if n.get("description") == nil {
		p.reportf(n.pos, "%s has no description; add description: \"...\" saying what its tools are for", where)
	}
}

// suggestGroupName turns a name into one that a group may have.
func suggestGroupName(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + 'a' - 'A')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	if out == "" || out[0] < 'a' || out[0] > 'z' {
		out = "group_" + out
	}
	return out[:min(len(out), 64)]
}
