package lock

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toolc/toolc/catalog"
)

// Prompt is one prompt: its name, what a user reads about it, and its
// arguments, which clients fill in by name.
type Prompt struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description"`
	Arguments   Message  `json:"arguments"`
	Scopes      []string `json:"scopes,omitempty"`
	// Template is set on a prompt whose messages the contract writes.
	Template bool        `json:"template,omitempty"`
	Pos      catalog.Pos `json:"-"`
}

// Resource is one resource or resource template: its name, the URI or
// template clients read it by, its MIME type, and a template's variables.
type Resource struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	URI         string      `json:"uri,omitempty"`
	URITemplate string      `json:"uriTemplate,omitempty"`
	MIMEType    string      `json:"mimeType,omitempty"`
	Variables   *Message    `json:"variables,omitempty"`
	Scopes      []string    `json:"scopes,omitempty"`
	Pos         catalog.Pos `json:"-"`
}

// Skill is one Agent Skill (MCP's Skills extension): what a client
// depends on, which is its name, the URI of its SKILL.md (skills/get and
// resources/read take it) and the frontmatter description by which a
// host decides when to load it, and the scopes a caller needs to see it.
//
// The lock holds no digest of the skill's files and not its directory:
// the files are content, as a resource's text is, and editing them (or
// moving the directory the contract names) changes no call a client
// makes; skills/list gives clients the digests to notice new bytes.
type Skill struct {
	Name        string      `json:"name"`
	URI         string      `json:"uri"`
	Description string      `json:"description"`
	Scopes      []string    `json:"scopes,omitempty"`
	Pos         catalog.Pos `json:"-"`
}

// fromSkills records a service's skills. A skill is its service's: a
// caller needs the service's auth.scopes to see it (see mcpserver).
func fromSkills(s *catalog.Service) []*Skill {
	var out []*Skill
	for _, sk := range s.Skills {
		out = append(out, &Skill{Name: sk.Name, URI: sk.URI(), Description: sk.Description, Scopes: slices.Clone(s.Scopes), Pos: sk.Pos})
	}
	return out
}

func fromPrompts(ps []*catalog.Prompt) []*Prompt {
	var out []*Prompt
	for _, p := range ps {
		out = append(out, &Prompt{
			Name: p.Name, Title: p.Title, Description: p.Description,
			Arguments: fromMessage(&catalog.Message{Fields: p.Arguments, Pos: p.Pos}),
			Scopes:    slices.Clone(p.Scopes), Template: p.Messages != nil, Pos: p.Pos,
		})
	}
	return out
}

func fromResources(rs []*catalog.Resource) []*Resource {
	var out []*Resource
	for _, r := range rs {
		lr := &Resource{
			Name: r.Name, Title: r.Title, Description: r.Description,
			URI: r.URI, URITemplate: r.URITemplate, MIMEType: r.MIMEType,
			Scopes: slices.Clone(r.Scopes), Pos: r.Pos,
		}
		if r.IsTemplate() {
			m := fromMessage(&catalog.Message{Fields: r.Variables, Pos: r.Pos})
			lr.Variables = &m
		}
		out = append(out, lr)
	}
	return out
}

func (s *Service) sortEntries() {
	slices.SortStableFunc(s.Prompts, func(a, b *Prompt) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Resources, func(a, b *Resource) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Skills, func(a, b *Skill) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range s.Prompts {
		p.Arguments.sort()
		p.Arguments.Fingerprint = p.Arguments.fingerprint()
	}
	for _, r := range s.Resources {
		if r.Variables != nil {
			r.Variables.sort()
			r.Variables.Fingerprint = r.Variables.fingerprint()
		}
	}
}

// entries diffs the prompts, resources and skills of the services that
// match, by name: a prompt, resource or skill is the same one while its
// name is.
func (d *differ) entries(old, new *Lock) {
	for _, n := range new.Services {
		o := d.oldService[n]
		var oldPrompts []*Prompt
		var oldResources []*Resource
		var oldSkills []*Skill
		if o != nil {
			oldPrompts, oldResources, oldSkills = o.Prompts, o.Resources, o.Skills
		}
		d.prompts(n, oldPrompts, n.Prompts)
		d.resources(n, oldResources, n.Resources)
		d.skills(n, oldSkills, n.Skills)
	}
	for _, o := range old.Services {
		if d.newService[o] != nil {
			continue
		}
		for _, p := range o.Prompts {
			d.changes = append(d.changes, Change{Rule: "prompt-removed", Breaking: true, Service: o.Name, Tool: p.Name,
				Message: fmt.Sprintf("prompt %q was removed with its service %q, which was in %s; clients that offer it break", p.Name, o.Name, o.Dir)})
		}
		for _, r := range o.Resources {
			d.changes = append(d.changes, Change{Rule: "resource-removed", Breaking: true, Service: o.Name, Tool: r.Name,
				Message: fmt.Sprintf("resource %q (%s) was removed with its service %q, which was in %s; clients that read it break", r.Name, r.uri(), o.Name, o.Dir)})
		}
		for _, sk := range o.Skills {
			d.changes = append(d.changes, Change{Rule: "skill-removed", Breaking: true, Service: o.Name, Tool: sk.Name,
				Message: fmt.Sprintf("skill %q (%s) was removed with its service %q, which was in %s; hosts that load it break", sk.Name, sk.URI, o.Name, o.Dir)})
		}
	}
}

func (r *Resource) uri() string { return cmp.Or(r.URI, r.URITemplate) }

// entryAt is where a change to a prompt or resource is reported: its
// name stands in Change.Tool.
func entryAt(s *Service, name string, pos catalog.Pos) located {
	return located{s, &Tool{Name: name, Pos: pos}}
}

func (d *differ) prompts(s *Service, old, new []*Prompt) {
	byName := map[string]*Prompt{}
	for _, p := range old {
		byName[p.Name] = p
	}
	for _, n := range new {
		at := entryAt(s, n.Name, n.Pos)
		path := func(keys ...string) []string { return append([]string{"prompts", n.Name}, keys...) }
		o := byName[n.Name]
		delete(byName, n.Name)
		if o == nil {
			d.add(at, "prompt-added", path(), n.Pos, "prompt %q was added to service %q", n.Name, s.Name)
			continue
		}
		what := fmt.Sprintf("prompt %q", n.Name)
		d.text(at, path, what, o.Title, n.Title, o.Description, n.Description, o.Scopes, n.Scopes)
		d.arguments(at, path("arguments"), what, "argument", &o.Arguments, &n.Arguments)
	}
	for _, o := range old {
		if byName[o.Name] != nil {
			d.add(entryAt(s, o.Name, s.Pos), "prompt-removed", nil, s.Pos,
				"prompt %q was removed from service %q; clients that offer it, and users who pick it, break: keep it until they no longer do", o.Name, s.Name)
		}
	}
}

func (d *differ) resources(s *Service, old, new []*Resource) {
	byName := map[string]*Resource{}
	for _, r := range old {
		byName[r.Name] = r
	}
	for _, n := range new {
		at := entryAt(s, n.Name, n.Pos)
		path := func(keys ...string) []string { return append([]string{"resources", n.Name}, keys...) }
		o := byName[n.Name]
		delete(byName, n.Name)
		if o == nil {
			d.add(at, "resource-added", path(), n.Pos, "resource %q (%s) was added to service %q", n.Name, n.uri(), s.Name)
			continue
		}
		what := fmt.Sprintf("resource %q", n.Name)
		if o.uri() != n.uri() {
			key := "uri"
			if n.URITemplate != "" {
				key = "uriTemplate"
			}
			d.add(at, "resource-uri-changed", path(key), n.Pos, "the URI of %s changed from %q to %q; clients that read %q, and links to it, break", what, o.uri(), n.uri(), o.uri())
		}
		if o.MIMEType != n.MIMEType {
			d.add(at, "resource-mime-type-changed", path("mimeType"), n.Pos, "the MIME type of %s changed from %q to %q; clients that parse its content break", what, o.MIMEType, n.MIMEType)
		}
		d.text(at, path, what, o.Title, n.Title, o.Description, n.Description, o.Scopes, n.Scopes)
		if o.Variables != nil && n.Variables != nil {
			d.arguments(at, path("variables"), what, "variable", o.Variables, n.Variables)
		}
	}
	for _, o := range old {
		if byName[o.Name] != nil {
			d.add(entryAt(s, o.Name, s.Pos), "resource-removed", nil, s.Pos,
				"resource %q (%s) was removed from service %q; clients that read it, and links to it, break", o.Name, o.uri(), s.Name)
		}
	}
}

// skills compares a service's skills by name. A skill's URI follows from
// its name, so a renamed skill is one removed and one added.
func (d *differ) skills(s *Service, old, new []*Skill) {
	byName := map[string]*Skill{}
	for _, sk := range old {
		byName[sk.Name] = sk
	}
	for _, n := range new {
		at := entryAt(s, n.Name, n.Pos)
		path := func(keys ...string) []string { return append([]string{"skills", n.Name}, keys...) }
		o := byName[n.Name]
		delete(byName, n.Name)
		if o == nil {
			d.add(at, "skill-added", path(), n.Pos, "skill %q (%s) was added to service %q", n.Name, n.URI, s.Name)
			continue
		}
		what := fmt.Sprintf("skill %q", n.Name)
		if o.URI != n.URI {
			d.add(at, "resource-uri-changed", path(), n.Pos, "the URI of %s changed from %q to %q; hosts that load %q break", what, o.URI, n.URI, o.URI)
		}
		// A skill has no title, and its scopes are its service's: a
		// scope's change is at the service's auth.scopes.
		d.text(at, func(keys ...string) []string {
			if len(keys) > 0 && keys[0] == "auth" {
				return keys
			}
			return path(keys...)
		}, what, "", "", o.Description, n.Description, o.Scopes, n.Scopes)
	}
	for _, o := range old {
		if byName[o.Name] != nil {
			d.add(entryAt(s, o.Name, s.Pos), "skill-removed", nil, s.Pos,
				"skill %q (%s) was removed from service %q; hosts that load it, and users who invoke it by name, break: keep it until they no longer do", o.Name, o.URI, s.Name)
		}
	}
}

// text compares what a user reads about a prompt or a resource, and the
// scopes a caller needs for it.
func (d *differ) text(at located, path func(...string) []string, what, oldTitle, newTitle, oldDesc, newDesc string, oldScopes, newScopes []string) {
	if oldTitle != newTitle {
		d.add(at, "title-changed", path("title"), at.tool.Pos, "title of %s changed from %q to %q", what, oldTitle, newTitle)
	}
	if oldDesc != newDesc {
		d.add(at, "description-changed", path("description"), at.tool.Pos, "description of %s changed", what)
	}
	for _, sc := range newScopes {
		if !slices.Contains(oldScopes, sc) {
			d.add(at, "scope-added", path("auth", "scopes"), at.tool.Pos, "%s now needs the OAuth scope %q; callers whose tokens lack it can no longer see or use it", what, sc)
		}
	}
	for _, sc := range oldScopes {
		if !slices.Contains(newScopes, sc) {
			d.add(at, "scope-removed", path("auth", "scopes"), at.tool.Pos, "%s no longer needs the OAuth scope %q", what, sc)
		}
	}
}

// arguments compares a prompt's arguments or a template's variables:
// what a client fills in by name.
func (d *differ) arguments(at located, base []string, what, kind string, o, n *Message) {
	of, nf := fieldIndex(o), fieldIndex(n)
	for _, name := range sortedKeys(of) {
		if nf[name] == nil {
			d.add(at, "argument-removed", base, n.Pos, "%s %q of %s was removed; clients that fill it in are refused", kind, name, what)
		}
	}
	for _, name := range sortedKeys(nf) {
		f, old := nf[name], of[name]
		key := func(k string) []string { return append(slices.Clone(base), name, k) }
		switch {
		case old == nil && f.Required:
			d.add(at, "argument-added-required", append(slices.Clone(base), name), f.Pos, "%s %q was added to %s as required; clients that leave it out are refused", kind, name, what)
		case old == nil:
			d.add(at, "argument-added-optional", append(slices.Clone(base), name), f.Pos, "optional %s %q was added to %s", kind, name, what)
		case !old.Required && f.Required:
			d.add(at, "argument-now-required", key("required"), f.Pos, "%s %q of %s is now required; clients that leave it out are refused", kind, name, what)
		case old.Required && !f.Required:
			d.add(at, "argument-now-optional", key("required"), f.Pos, "%s %q of %s is now optional", kind, name, what)
		}
		if old == nil {
			continue
		}
		if old.Description != f.Description {
			d.add(at, "description-changed", key("description"), f.Pos, "description of %s %q of %s changed", kind, name, what)
		}
		os, ns := *old.shape(), *f.shape()
		os.Required, ns.Required, os.Default, ns.Default = false, false, nil, nil
		if valueText(os) != valueText(ns) {
			gone := setDiff(old.Enum, f.Enum)
			switch {
			case (f.Enum == nil || len(gone) == 0) && old.Pattern == f.Pattern && valueText(old.MinLength) == valueText(f.MinLength) && valueText(old.MaxLength) == valueText(f.MaxLength) && old.Format == f.Format:
				d.add(at, "argument-loosened", key("enum"), f.Pos, "%s %q of %s takes more values than before", kind, name, what)
			default:
				d.add(at, "argument-constrained", key("enum"), f.Pos, "the values that %s %q of %s takes changed (its enum, pattern, format or bounds); clients that fill in an old value may be refused", kind, name, what)
			}
		}
	}
}
