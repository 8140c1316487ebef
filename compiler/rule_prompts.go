package compiler

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/contentfile"
)

// One entry of a service's prompts, resources or skills.
type entry struct {
	service
	node *node
}

// checkEntryName reports the name of a prompt or resource that is not
// one a tool could have: clients list them beside tools, by name.
func checkEntryName(p *Pass, n *node, kind string) {
	if !toolNameRE.MatchString(n.label) {
		p.reportf(n.pos, "%s name %q must start with a lower-case letter and hold only letters, digits, underscores and hyphens, at most 64 characters%s", kind, n.label, try(n.label, suggestName(n.label, '_')))
	}
}

// entryStruct reports whether n, an entry of a service (a prompt, a
// resource, a skill), is a struct, and checks its keys against sh; an
// entry of another kind is reported as not what it must be (want),
// unless CUE has reported it already.
func entryStruct(p *Pass, n *node, where, want string, sh shape) bool {
	if n.kind != kStruct {
		if n.kind != kError && n.kind != kIncomplete {
			p.reportf(n.pos, "%s must be %s; it is %s", where, want, n.kind)
		}
		return false
	}
	checkShape(p, n, sh, where)
	return true
}

// entries yields the entries under key (prompts, resources, skills) of
// every service, in order.
func (p *Pass) entries(key string) func(yield func(entry) bool) {
	return func(yield func(entry) bool) {
		for s := range p.services() {
			for _, n := range s.root.get(key).structFields() {
				if !yield(entry{s, n}) {
					return
				}
			}
		}
	}
}

var (
	promptShape = shape{what: "prompt", keys: map[string]keySpec{
		"description": {owner: "description"},
		"title":       {kinds: str},
		"arguments":   {kinds: strukt},
		"messages":    {kinds: list},
		"auth":        {kinds: strukt, sub: authShape},
	}}
	messageKeys = shape{what: "prompt message", keys: map[string]keySpec{
		"role":     {kinds: str},
		"text":     {kinds: str},
		"image":    {kinds: str},
		"audio":    {kinds: str},
		"mimeType": {kinds: str},
		"resource": {kinds: strukt, sub: shape{what: "embedded resource", keys: map[string]keySpec{
			"uri":      {kinds: str},
			"mimeType": {kinds: str},
			"text":     {kinds: str},
			"file":     {kinds: str},
		}}},
	}}
	resourceShape = shape{what: "resource", keys: map[string]keySpec{
		"description": {owner: "description"},
		"title":       {kinds: str},
		"uri":         {kinds: str},
		"uriTemplate": {kinds: str},
		"mimeType":    {kinds: str},
		"variables":   {kinds: strukt},
		"text":        {kinds: str},
		"file":        {kinds: str},
		"auth":        {kinds: strukt, sub: authShape},
	}}
	mimeTypeRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$`)
	uriSchemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// promptRule checks prompts: their names, their arguments (string fields,
// since MCP passes every argument as a string), and their messages: one
// kind of content each, {{name}} only for declared arguments, and files
// that stay beside the contract within the size bound.
var promptRule = &Rule{
	ID:       "prompt",
	Doc:      "prompts: names as tool names, string arguments, messages of one kind of content whose {{name}} placeholders are declared arguments, files beside the contract within 4 MiB",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for e := range p.entries("prompts") {
			n := e.node
			where := fmt.Sprintf("prompt %q", n.label)
			checkEntryName(p, n, "prompt")
			if !entryStruct(p, n, where, "a struct with a description, arguments and messages", promptShape) {
				continue
			}
			checkBlank(p, n.get("title"), "title of "+where)
			args := checkStringFields(p, n.get("arguments"), "argument", where)
			msgs := n.get("messages")
			if msgs == nil || msgs.kind != kList {
				continue
			}
			if len(msgs.elems) == 0 {
				p.reportf(msgs.pos, "%s has an empty list of messages; give it one, or drop messages to have the handler write them", where)
			}
			for i, m := range msgs.elems {
				checkMessage(p, e, m, fmt.Sprintf("message %d of %s", i+1, where), args)
			}
		}
	},
}

// checkStringFields checks the arguments of a prompt or the variables of a
// resource template: fields, named as request fields, of type string.
// It returns their names.
func checkStringFields(p *Pass, fields *node, what, where string) []string {
	var names []string
	for _, f := range fields.structFields() {
		names = append(names, f.label)
		fwhere := fmt.Sprintf("%s %q of %s", what, f.label, where)
		if !wireNameRE.MatchString(f.label) {
			p.reportf(f.pos, "%s name %q must be snake_case or lowerCamelCase: a lower-case letter, then lower-case letters, digits and underscores, or letters and digits, at most 64 characters", what, f.label)
		}
		if f.kind != kStruct {
			if f.kind != kError && f.kind != kIncomplete {
				p.reportf(f.pos, "%s must be a struct such as {type: \"string\", description: \"...\"}; it is %s", fwhere, f.kind)
			}
			continue
		}
		checkShape(p, f, fieldShape, fwhere)
		switch t := f.get("type"); {
		case t == nil:
			p.reportf(f.pos, "%s has no type; add type: \"string\"", fwhere)
		case t.kind == kString && t.str != "string":
			p.reportf(t.pos, "%s is of type %q; MCP passes every %s as a string, so it must be type: \"string\" (with an enum or a pattern to hold its values)", fwhere, t.str, what)
		}
		var enum []string
		if e := f.get("enum"); e != nil {
			if e.kind != kList || len(e.elems) == 0 {
				p.reportf(e.pos, "enum of %s must be a non-empty list of strings", fwhere)
			}
			for _, v := range e.elems {
				if v.kind != kString {
					p.reportf(v.pos, "enum of %s must hold strings, not %s", fwhere, v.kind)
				} else if slices.Contains(enum, v.str) {
					p.reportf(v.pos, "enum of %s lists %q twice", fwhere, v.str)
				}
				enum = append(enum, v.str)
			}
		}
		if d := f.get("default"); d != nil {
			switch {
			case f.get("required") == nil || f.get("required").kind != kBool || f.get("required").b:
				p.reportf(d.pos, "default of %s applies only to an optional %s; add required: false, or drop the default", fwhere, what)
			case d.kind != kString:
				p.reportf(d.pos, "default of %s must be a string, not %s", fwhere, d.kind)
			case enum != nil && !slices.Contains(enum, d.str):
				p.reportf(d.pos, "default %q of %s is not one of its enum values", d.str, fwhere)
			}
		}
	}
	return names
}

func checkMessage(p *Pass, e entry, m *node, where string, args []string) {
	if m.kind != kStruct {
		if m.kind != kError && m.kind != kIncomplete {
			p.reportf(m.pos, "%s must be a struct such as {role: \"user\", text: \"...\"}; it is %s", where, m.kind)
		}
		return
	}
	checkShape(p, m, messageKeys, where)
	switch r := m.get("role"); {
	case r == nil:
		p.reportf(m.pos, "%s has no role; add role: \"user\" or role: \"assistant\"", where)
	case r.kind == kString && r.str != "user" && r.str != "assistant":
		p.reportf(r.pos, "role %q of %s must be \"user\" or \"assistant\"", r.str, where)
	}
	var kinds []string
	for _, k := range []string{"text", "image", "audio", "resource"} {
		if m.get(k) != nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		p.reportf(m.pos, "%s holds %s; a message holds exactly one of text, image, audio or resource", where, holds(kinds))
	}
	if mt := m.get("mimeType"); mt != nil && m.get("image") == nil && m.get("audio") == nil {
		p.reportf(mt.pos, "mimeType of %s applies to an image or audio message; a resource message takes resource: mimeType", where)
	}
	checkPlaceholders(p, m.get("text"), where, "argument", args)
	for _, k := range []string{"image", "audio"} {
		if f := m.get(k); f != nil && f.kind == kString {
			checkContentFile(p, e, f, m.get("mimeType"), k+" of "+where, k+"/")
		}
	}
	res := m.get("resource")
	if res == nil || res.kind != kStruct {
		return
	}
	rwhere := "resource of " + where
	switch u := res.get("uri"); {
	case u == nil:
		p.reportf(res.pos, "%s has no uri; add uri: \"scheme:...\"", rwhere)
	case u.kind == kString && !uriSchemeRE.MatchString(u.str) && !strings.HasPrefix(u.str, "{{"):
		p.reportf(u.pos, "uri %q of %s is not an absolute URI: it needs a scheme, such as file:// or docs://", u.str, rwhere)
	default:
		checkPlaceholders(p, u, rwhere, "argument", args)
	}
	checkMIMEType(p, res.get("mimeType"), rwhere)
	text, file := res.get("text"), res.get("file")
	switch {
	case text != nil && file != nil:
		p.reportf(file.pos, "%s holds text and a file; give one", rwhere)
	case text == nil && file == nil:
		p.reportf(res.pos, "%s holds neither text nor a file; give one", rwhere)
	case file != nil && file.kind == kString:
		checkContentFile(p, e, file, res.get("mimeType"), rwhere, "")
	default:
		checkPlaceholders(p, text, rwhere, "argument", args)
	}
}

func holds(kinds []string) string {
	if len(kinds) == 0 {
		return "no content"
	}
	return strings.Join(kinds, " and ")
}

// checkPlaceholders reports each {{name}} in a text that names no
// argument (of a prompt) or variable (of a resource template).
func checkPlaceholders(p *Pass, text *node, where, what string, names []string) {
	if text == nil || text.kind != kString {
		return
	}
	for _, m := range catalog.Placeholders(text.str) {
		if !slices.Contains(names, m[1]) {
			p.reportf(text.pos, "%s of %s names no %s of it%s; declare it, or write the text without the braces", m[0], where, what, suggest(m[1], names))
		}
	}
}

// checkContentFile checks a file that a message or a resource serves: a
// path below the contract's directory, a regular file within the bound,
// and a MIME type that says how to send it. prefix, such as "image/",
// is what the MIME type must start with.
func checkContentFile(p *Pass, e entry, f, mimeType *node, where, prefix string) {
	if _, err := contentfile.Check(e.pkg.Dir, f.str); err != nil {
		p.reportf(f.pos, "%s: %v", where, err)
		return
	}
	mt := contentfile.MIMEType(f.str)
	if mimeType != nil && mimeType.kind == kString {
		checkMIMEType(p, mimeType, where)
		mt = mimeType.str
	} else if mt == "" {
		p.reportf(f.pos, "%s: toolc does not know the MIME type of %s by its extension; add mimeType: \"...\"", where, filepath.Base(f.str))
		return
	}
	if prefix != "" && !strings.HasPrefix(mt, prefix) {
		p.reportf(f.pos, "%s is %s, not %s*", where, mt, prefix)
	}
}

func checkMIMEType(p *Pass, n *node, where string) {
	if n != nil && n.kind == kString && !mimeTypeRE.MatchString(n.str) {
		p.reportf(n.pos, "mimeType %q of %s is not a MIME type such as text/plain", n.str, where)
	}
}

// resourceRule checks resources: a uri or a URI template (RFC 6570) whose
// variables are exactly the declared ones, and content written in the
// contract or read from a file beside it.
var resourceRule = &Rule{
	ID:       "resource",
	Doc:      "resources: a uri or an RFC 6570 uriTemplate whose variables are exactly the declared string fields; text or a file beside the contract within 4 MiB, with a known MIME type",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for e := range p.entries("resources") {
			n := e.node
			where := fmt.Sprintf("resource %q", n.label)
			checkEntryName(p, n, "resource")
			if !entryStruct(p, n, where, "a struct with a uri and a description", resourceShape) {
				continue
			}
			checkBlank(p, n.get("title"), "title of "+where)
			checkMIMEType(p, n.get("mimeType"), where)
			uri, tmpl, vars := n.get("uri"), n.get("uriTemplate"), n.get("variables")
			var names []string
			switch {
			case uri == nil && tmpl == nil:
				p.reportf(n.pos, "%s has no uri; add uri: \"scheme:...\", or uriTemplate: \"scheme:.../{name}\" for a resource template", where)
			case uri != nil && tmpl != nil:
				p.reportf(tmpl.pos, "%s has a uri and a uriTemplate; give one", where)
			case uri != nil && uri.kind == kString:
				checkURI(p, uri, where)
				if vars != nil {
					p.reportf(vars.pos, "variables of %s belong to a uriTemplate; this resource has a fixed uri", where)
				}
			case tmpl != nil && tmpl.kind == kString:
				names = checkStringFields(p, vars, "variable", where)
				checkTemplate(p, tmpl, vars, names, where)
			}
			text, file := n.get("text"), n.get("file")
			switch {
			case text != nil && file != nil:
				p.reportf(file.pos, "%s holds text and a file; give one, or neither for the handler to read it", where)
			case file != nil && file.kind == kString:
				checkContentFile(p, e, file, n.get("mimeType"), where, "")
			case text != nil && text.kind == kString:
				if strings.TrimSpace(text.str) == "" {
					p.reportf(text.pos, "text of %s is blank; give the content, or drop text for the handler to read it", where)
				}
				if tmpl != nil {
					checkPlaceholders(p, text, where, "variable", names)
				}
			}
		}
	},
}

func checkURI(p *Pass, uri *node, where string) {
	u, err := url.Parse(uri.str)
	switch {
	case strings.Contains(uri.str, "{"):
		p.reportf(uri.pos, "uri %q of %s holds a brace; for a resource template write uriTemplate: %q and describe its variables", uri.str, where, uri.str)
	case err != nil:
		p.reportf(uri.pos, "uri %q of %s does not parse: %v", uri.str, where, unwrapURLError(err))
	case u.Scheme == "" || !uriSchemeRE.MatchString(uri.str):
		p.reportf(uri.pos, "uri %q of %s is not an absolute URI: it needs a scheme, such as file:// or docs://", uri.str, where)
	}
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// checkTemplate parses a URI template with the library that go-sdk serves
// templates with, so that what toolc check accepts is what is served, and
// holds its variables to the declared ones.
func checkTemplate(p *Pass, tmpl, vars *node, declared []string, where string) {
	t, err := uritemplate.New(tmpl.str)
	if err != nil {
		p.reportf(tmpl.pos, "uriTemplate %q of %s is not an RFC 6570 URI template: %v", tmpl.str, where, err)
		return
	}
	if !uriSchemeRE.MatchString(tmpl.str) {
		p.reportf(tmpl.pos, "uriTemplate %q of %s is not absolute: it needs a scheme, such as file:// or docs://", tmpl.str, where)
	}
	used := t.Varnames()
	if len(used) == 0 {
		p.reportf(tmpl.pos, "uriTemplate %q of %s has no variables; write it as uri: %q", tmpl.str, where, tmpl.str)
	}
	for _, v := range used {
		if !slices.Contains(declared, v) {
			p.reportf(tmpl.pos, "variable %q of the uriTemplate of %s is not declared; add variables: %s: {type: \"string\", description: \"...\"}", v, where, v)
		}
	}
	for _, f := range vars.structFields() {
		if !slices.Contains(used, f.label) {
			p.reportf(f.pos, "variable %q of %s is not in its uriTemplate %q", f.label, where, tmpl.str)
		}
	}
}
