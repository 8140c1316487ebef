package compiler

import (
	"cmp"
	"path/filepath"
	"slices"

	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/contentfile"
	"github.com/toolc/toolc/internal/skilldir"
)

// lowerer turns checked nodes into catalog IR. It is lenient: what the
// rules reported as wrong is left out or zero, never a panic, so that the
// rules themselves can use lowered fields.
type lowerer struct {
	wd string
}

func (l lowerer) pos(p token.Pos) catalog.Pos {
	if !p.IsValid() {
		return catalog.Pos{}
	}
	tp := p.Position()
	return catalog.Pos{File: filepath.ToSlash(relPath(l.wd, tp.Filename)), Line: tp.Line, Column: tp.Column}
}

func (l lowerer) service(pkg *Package) *catalog.Service {
	root := pkg.root
	s := &catalog.Service{
		Name:        stringAt(root, "name"),
		Version:     stringAt(root, "version"),
		Description: stringAt(root, "description"),
		Dir:         filepath.ToSlash(relPath(l.wd, pkg.Dir)),
		Handler:     cmp.Or(stringAt(root, "handler"), "."),
		MCPTitle:    stringAt(root.get("mcp"), "title"),
		Pos:         l.pos(root.pos),
	}
	s.Upstream = lowerUpstream(root.get("upstream"))
	serviceScopes := scopesAt(root)
	s.Scopes = effectiveScopes(serviceScopes, nil)
	for _, n := range root.get("prompts").structFields() {
		if n.kind == kStruct {
			pr := l.prompt(n)
			pr.Scopes = effectiveScopes(serviceScopes, scopesAt(n))
			s.Prompts = append(s.Prompts, pr)
		}
	}
	for _, n := range root.get("resources").structFields() {
		if n.kind == kStruct {
			r := l.resource(n)
			r.Scopes = effectiveScopes(serviceScopes, scopesAt(n))
			s.Resources = append(s.Resources, r)
		}
	}
	for _, n := range root.get("skills").structFields() {
		if n.kind == kStruct {
			// The skill rule reports a SKILL.md that cannot be read; the
			// description is then left empty.
			desc, _ := skilldir.Describe(pkg.Dir, skillDir(n))
			s.Skills = append(s.Skills, &catalog.Skill{Name: n.label, Pos: l.pos(n.pos), Dir: skillDir(n), Description: desc})
		}
	}
	for _, g := range root.get("groups").structFields() {
		if g.kind == kStruct {
			s.Groups = append(s.Groups, &catalog.Group{Name: g.label, Description: stringAt(g, "description"), Deferred: boolAt(g, "defer")})
		}
	}
	for _, t := range root.get("tools").structFields() {
		if t.kind == kStruct {
			lt := l.tool(t)
			lt.Scopes = effectiveScopes(serviceScopes, scopesAt(t))
			// A tool's defer overrides its group's.
			if g := s.Group(lt.Group); g != nil {
				lt.Deferred = g.Deferred
			} else {
				lt.Group = "" // group reports it
			}
			if d := optBool(t, "defer"); d != nil {
				lt.Deferred = *d
			}
			s.Tools = append(s.Tools, lt)
		}
	}
	return s
}

func (l lowerer) tool(n *node) *catalog.Tool {
	t := &catalog.Tool{
		Name:        n.label,
		Description: stringAt(n, "description"),
		Title:       stringAt(n, "title"),
		Deprecated:  boolAt(n, "deprecated"),
		Strict:      boolAt(n, "strict"),
		MCPName:     stringAt(n.get("mcp"), "name"),
		Group:       stringAt(n, "group"),
		Task:        stringAt(n, "task"),
		Request:     l.message(n.get("request")),
		Pos:         l.pos(n.pos),
	}
	if a := n.get("annotations"); a != nil {
		t.Annotations = catalog.Annotations{
			ReadOnly:    optBool(a, "readOnly"),
			Destructive: optBool(a, "destructive"),
			Idempotent:  optBool(a, "idempotent"),
			OpenWorld:   optBool(a, "openWorld"),
		}
	}
	if r := n.get("response"); r != nil && r.kind == kStruct {
		m := l.message(r)
		t.Response = &m
	}
	if ex := n.get("examples"); ex != nil && ex.kind == kList {
		for _, e := range ex.elems {
			if v, ok := e.value(); ok {
				if m, ok := v.(map[string]any); ok {
					t.Examples = append(t.Examples, m)
				}
			}
		}
	}
	return t
}

func (l lowerer) prompt(n *node) *catalog.Prompt {
	p := &catalog.Prompt{
		Name:        n.label,
		Pos:         l.pos(n.pos),
		Description: stringAt(n, "description"),
		Title:       stringAt(n, "title"),
		Arguments:   l.fields(n.get("arguments")),
	}
	if msgs := n.get("messages"); msgs != nil && msgs.kind == kList {
		p.Messages = []*catalog.PromptMessage{}
		for _, m := range msgs.elems {
			if m.kind != kStruct {
				continue
			}
			pm := &catalog.PromptMessage{Role: stringAt(m, "role")}
			switch {
			case m.get("text") != nil:
				pm.Type, pm.Text = "text", stringAt(m, "text")
			case m.get("image") != nil, m.get("audio") != nil:
				pm.Type = "image"
				if m.get("audio") != nil {
					pm.Type = "audio"
				}
				pm.File = stringAt(m, pm.Type)
				pm.MIMEType = cmp.Or(stringAt(m, "mimeType"), contentfile.MIMEType(pm.File))
			case m.get("resource") != nil:
				r := m.get("resource")
				pm.Type, pm.URI, pm.Text, pm.File = "resource", stringAt(r, "uri"), stringAt(r, "text"), stringAt(r, "file")
				pm.MIMEType = stringAt(r, "mimeType")
				if pm.MIMEType == "" && pm.File != "" {
					pm.MIMEType = contentfile.MIMEType(pm.File)
				}
			}
			p.Messages = append(p.Messages, pm)
		}
	}
	return p
}

func (l lowerer) resource(n *node) *catalog.Resource {
	r := &catalog.Resource{
		Name:        n.label,
		Pos:         l.pos(n.pos),
		Description: stringAt(n, "description"),
		Title:       stringAt(n, "title"),
		URI:         stringAt(n, "uri"),
		URITemplate: stringAt(n, "uriTemplate"),
		MIMEType:    stringAt(n, "mimeType"),
		Text:        stringAt(n, "text"),
		File:        stringAt(n, "file"),
	}
	if vars := n.get("variables"); vars != nil {
		r.Variables = l.fields(vars)
	}
	switch {
	case r.MIMEType != "":
	case r.File != "":
		r.MIMEType = contentfile.MIMEType(r.File)
	case r.Text != "":
		r.MIMEType = "text/plain"
	}
	return r
}

// fields lowers a struct of fields: a prompt's arguments, a template's
// variables.
func (l lowerer) fields(n *node) []*catalog.Field {
	out := []*catalog.Field{}
	for _, f := range n.structFields() {
		if f.kind == kStruct {
			out = append(out, l.field(f))
		}
	}
	return out
}

func (l lowerer) message(n *node) catalog.Message {
	m := catalog.Message{Fields: []*catalog.Field{}}
	if n == nil || n.kind != kStruct {
		return m
	}
	m.Description = stringAt(n, "description")
	m.Pos = l.pos(n.pos)
	for _, f := range n.get("fields").structFields() {
		if f.kind == kStruct {
			m.Fields = append(m.Fields, l.field(f))
		}
	}
	return m
}

func (l lowerer) field(n *node) *catalog.Field {
	f := &catalog.Field{
		Name:        n.label,
		Type:        catalog.Type(stringAt(n, "type")),
		Items:       catalog.Type(stringAt(n, "items")),
		Description: stringAt(n, "description"),
		Required:    true,
		Deprecated:  boolAt(n, "deprecated"),
		Pattern:     stringAt(n, "pattern"),
		Format:      stringAt(n, "format"),
		UniqueItems: boolAt(n, "uniqueItems"),
		Object:      boolAt(n, "object"),
		MCPHeader:   stringAt(n.get("mcp"), "header"),
		MinLength:   intAt(n, "minLength"),
		MaxLength:   intAt(n, "maxLength"),
		MinItems:    intAt(n, "minItems"),
		MaxItems:    intAt(n, "maxItems"),
		Minimum:     numAt(n, "minimum"),
		Maximum:     numAt(n, "maximum"),

		ExclusiveMinimum: numAt(n, "exclusiveMinimum"),
		ExclusiveMaximum: numAt(n, "exclusiveMaximum"),

		Pos: l.pos(n.pos),
	}
	if r := n.get("required"); r != nil && r.kind == kBool {
		f.Required = r.b
	}
	if isRecord(n) {
		f.Items = catalog.Object
		f.Fields = []*catalog.Field{}
		for _, sub := range recordFields(n) {
			if sub.kind == kStruct && !isRecord(sub) {
				f.Fields = append(f.Fields, l.field(sub))
			}
		}
	}
	if d := n.get("default"); d != nil {
		f.Default, _ = d.value()
	}
	if e := n.get("enum"); e != nil && e.kind == kList {
		for _, x := range e.elems {
			if v, ok := x.value(); ok {
				f.Enum = append(f.Enum, v)
			}
		}
	}
	if e := n.get("examples"); e != nil && e.kind == kList {
		for _, x := range e.elems {
			if v, ok := x.value(); ok {
				f.Examples = append(f.Examples, v)
			}
		}
	}
	return f
}

// scopesAt returns the strings of n's auth.scopes; auth-scope reports
// anything else.
func scopesAt(n *node) []string {
	var out []string
	if l := n.get("auth").get("scopes"); l != nil && l.kind == kList {
		for _, e := range l.elems {
			if e.kind == kString {
				out = append(out, e.str)
			}
		}
	}
	return out
}

// effectiveScopes are the scopes a tool needs: its service's and its own,
// sorted and each once, so that the catalog, the lock and a fingerprint
// do not change with the order they were written in.
func effectiveScopes(service, tool []string) []string {
	all := slices.Concat(service, tool)
	if len(all) == 0 {
		return nil
	}
	slices.Sort(all)
	return slices.Compact(all)
}

func stringAt(n *node, key string) string {
	if v := n.get(key); v != nil && v.kind == kString {
		return v.str
	}
	return ""
}

func boolAt(n *node, key string) bool {
	v := n.get(key)
	return v != nil && v.kind == kBool && v.b
}

func optBool(n *node, key string) *bool {
	if v := n.get(key); v != nil && v.kind == kBool {
		b := v.b
		return &b
	}
	return nil
}

func intAt(n *node, key string) *int64 {
	if v := n.get(key); v != nil && v.kind == kInt {
		i := v.i
		return &i
	}
	return nil
}

func numAt(n *node, key string) *float64 {
	v := n.get(key)
	switch {
	case v == nil:
		return nil
	case v.kind == kInt:
		f := float64(v.i)
		return &f
	case v.kind == kFloat:
		f := v.f
		return &f
	}
	return nil
}

func relPath(wd, file string) string {
	if wd == "" || !filepath.IsAbs(file) {
		return file
	}
	if rel, err := filepath.Rel(wd, file); err == nil && within(wd, file) {
		return rel
	}
	return file
}

// lowerUpstream lowers an upstream block; nil when there is none.
func lowerUpstream(n *node) *catalog.Upstream {
	if n == nil || n.kind != kStruct {
		return nil
	}
	u := &catalog.Upstream{
		URL:           stringAt(n, "url"),
		Dir:           stringAt(n, "dir"),
		StartTimeout:  stringAt(n, "startTimeout"),
		CallTimeout:   stringAt(n, "callTimeout"),
		CheckInterval: stringAt(n, "checkInterval"),
	}
	if c := n.get("command"); c != nil && c.kind == kList {
		for _, e := range c.elems {
			if e.kind == kString {
				u.Command = append(u.Command, e.str)
			}
		}
	}
	u.Env = lowerValues(n.get("env"))
	u.Headers = lowerValues(n.get("headers"))
	return u
}

// lowerValues lowers env or headers, in name order.
func lowerValues(n *node) []catalog.ValueFrom {
	var out []catalog.ValueFrom
	for _, v := range n.structFields() {
		if v.kind == kStruct {
			out = append(out, catalog.ValueFrom{Name: v.label, Env: stringAt(v, "env"), File: stringAt(v, "file"), Prefix: stringAt(v, "prefix")})
		}
	}
	slices.SortFunc(out, func(a, b catalog.ValueFrom) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
