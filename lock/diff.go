package lock

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
)

// Change is one difference between two locks.
type Change struct {
	// Rule names the kind of change (see Kinds), such as "field-removed".
	Rule string
	// Breaking is set when calls, clients or prompts made for the old
	// contract can fail against the new one.
	Breaking bool
	// Allowed is set on a breaking change to a service whose major version
	// was bumped: the version tells its users to expect it.
	Allowed bool
	// Service, Tool and Field name what changed, on the new side when it
	// exists there. Field is empty for a change to a tool or a service.
	Service, Tool, Field string
	Message              string
	// Pos is the position of the change in the new contract, as precise
	// as the lock knows it (a field, a message, a tool, a service), or
	// zero for a service that is gone.
	Pos catalog.Pos
	// Path locates the change more precisely: the keys from the service's
	// root value in the new contract to the key that changed, such as
	// tools, query_weather, request, fields, days, maximum. A key that the
	// new contract does not spell out (a bound that was dropped) is still
	// named; a reader looking for a position stops at the last key it
	// finds.
	Path []string
	// Tokens, on a change of what a tool or a request costs in tokens
	// (rule token-growth, made by package tokens, not by Diff), are its
	// counts before and after, per target.
	Tokens []TokenCount
}

// TokenCount is what a tool, or a request, costs in one target's tokens
// before and after a change.
type TokenCount = diag.TokenCount

// Kind is one kind of change, with the rule ID that reports it.
type Kind struct {
	ID       string
	Breaking bool
	Doc      string
}

// Kinds lists every kind of change that Diff reports, breaking ones first.
func Kinds() []Kind {
	return slices.Clone(kinds)
}

var kinds = []Kind{
	{"tool-removed", true, "a tool is gone (and no added tool has the same request)"},
	{"tool-renamed", true, "a tool is gone and a new one has the same request: calls to the old name fail"},
	{"mcp-name-changed", true, "the name that MCP clients call changed (a service rename, a pinned mcp.name, a move)"},
	{"field-removed", true, "a request field is gone: calls that send it are rejected as unknown"},
	{"field-renamed", true, "a request field is gone and a new one of the same type and constraints took its place"},
	{"field-type-changed", true, "a request field's type or items changed"},
	{"field-now-required", true, "an optional request field became required"},
	{"field-added-required", true, "a new required request field (required fields have no default)"},
	{"enum-value-removed", true, "an enum of a request field lost a value"},
	{"enum-added", true, "a request field that took any value now takes only an enum's"},
	{"bound-tightened", true, "minimum or minLength or minItems up, maximum or maxLength or maxItems down, a new bound, uniqueItems set, a free-form field limited to objects"},
	{"pattern-changed", true, "a request field's pattern changed or was added"},
	{"format-changed", true, "a request field's format changed or was added"},
	{"response-field-removed", true, "a response field is gone"},
	{"response-field-changed", true, "a response field's type, items or requiredness changed, or it may now hold values it could not before"},
	{"task-required", true, "a tool now requires MCP's Tasks extension (task: \"required\"): clients without it can no longer call it"},
	{"scope-added", true, "a tool, prompt, resource or skill needs a new OAuth scope (auth.scopes of it or its service): callers whose tokens lack it can no longer see or use it"},
	{"prompt-removed", true, "a prompt is gone: clients that offer it, and users who pick it, break"},
	{"resource-removed", true, "a resource or resource template is gone"},
	{"resource-uri-changed", true, "the uri or uriTemplate of a resource changed: clients that read the old one, and links to it, break"},
	{"skill-removed", true, "a skill is gone: hosts that load it, and users who invoke it by name, break"},
	{"resource-mime-type-changed", true, "the MIME type of a resource changed: clients that parse its content break"},
	{"argument-removed", true, "an argument of a prompt, or a variable of a resource template, is gone"},
	{"argument-added-required", true, "a new required prompt argument or template variable"},
	{"argument-now-required", true, "an optional prompt argument became required"},
	{"argument-constrained", true, "the values that a prompt argument or template variable takes changed: an enum lost values, or a pattern, format or length bound changed"},
	{"tool-added", false, "a new tool"},
	{"prompt-added", false, "a new prompt"},
	{"resource-added", false, "a new resource or resource template"},
	{"skill-added", false, "a new skill"},
	{"argument-added-optional", false, "a new optional prompt argument"},
	{"argument-now-optional", false, "a required prompt argument became optional"},
	{"argument-loosened", false, "a prompt argument or template variable takes more values: its enum gained values or was dropped"},
	{"field-added-optional", false, "a new optional request field"},
	{"field-now-optional", false, "a required request field became optional"},
	{"enum-widened", false, "an enum of a request field gained values, or was dropped"},
	{"bound-loosened", false, "a bound, pattern or format of a request field was relaxed or dropped"},
	{"default-changed", false, "the default of an optional request field changed: calls that omit it behave differently"},
	{"response-field-added", false, "a new response field"},
	{"response-field-narrowed", false, "a response field became required, or holds fewer values than before"},
	{"description-changed", false, "the description of a tool, a request, a response, a field, a prompt, a resource, a skill (its SKILL.md frontmatter's) or an argument changed"},
	{"title-changed", false, "the title of a tool, a prompt or a resource changed"},
	{"annotations-changed", false, "a tool's behaviour hints (readOnly, destructive, idempotent, openWorld) changed"},
	{"scope-removed", false, "a tool, prompt, resource or skill no longer needs an OAuth scope"},
	{"task-changed", false, "a tool's task support changed, other than to \"required\": clients of the Tasks extension get a task where they got a result, or the other way round"},
}

var breaking = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range kinds {
		m[k.ID] = k.Breaking
	}
	return m
}()

// Diff compares a lock with a newer one, usually made by FromCatalog so
// that changes carry positions, and returns every change, sorted by
// service, tool and field.
//
// Tools are matched by function name, which is unique across a catalog,
// and services by name, or by directory when a service was renamed. A
// removed and an added tool with the same request fingerprint are a
// rename; so are a removed and an added field of the same shape in one
// tool. Breaking changes to the tools of a service whose major version
// went up (1.x to 2.0, or 0.1 to 0.2) are Allowed.
func Diff(old, new *Lock) []Change {
	d := &differ{}
	d.matchServices(old, new)

	oldTools, newTools := toolIndex(old), toolIndex(new)
	var removed, added []located
	for _, name := range sortedKeys(oldTools) {
		o := oldTools[name]
		if n, ok := newTools[name]; ok {
			d.tool(o, n, false)
		} else {
			removed = append(removed, o)
		}
	}
	for _, name := range sortedKeys(newTools) {
		if _, ok := oldTools[name]; !ok {
			added = append(added, newTools[name])
		}
	}
	// A rename is a removed and an added tool of one request, when the
	// request says which: several tools without fields share a
	// fingerprint, and pairing them would be a guess.
	pairs := pair(removed, added,
		func(t located) string { return t.tool.Request.Fingerprint },
		func(t located) string { return t.tool.Name })
	for _, o := range removed {
		if n, ok := pairs[o.tool.Name]; ok {
			d.add(n, "tool-renamed", []string{"tools", n.tool.Name}, n.tool.Pos,
				"tool %q was renamed %q (its request is the same); models, prompts and clients that call %q break: keep the old name, or add the new tool beside the old one", o.tool.Name, n.tool.Name, o.tool.Name)
			d.tool(o, n, true)
			continue
		}
		ns := d.newService[o.service]
		if ns == nil {
			d.changes = append(d.changes, Change{
				Rule: "tool-removed", Breaking: true, Service: o.service.Name, Tool: o.tool.Name,
				Message: fmt.Sprintf("tool %q was removed with its service %q, which was in %s; models, prompts and clients that call it break", o.tool.Name, o.service.Name, o.service.Dir),
			})
			continue
		}
		d.add(located{ns, o.tool}, "tool-removed", nil, ns.Pos,
			"tool %q was removed from service %q; models, prompts and clients that call it break: keep it, marked deprecated: true, until they no longer do", o.tool.Name, ns.Name)
	}
	paired := map[string]bool{}
	for _, n := range pairs {
		paired[n.tool.Name] = true
	}
	for _, n := range added {
		if !paired[n.tool.Name] {
			d.add(n, "tool-added", []string{"tools", n.tool.Name}, n.tool.Pos, "tool %q was added to service %q", n.tool.Name, n.service.Name)
		}
	}
	d.entries(old, new)
	slices.SortStableFunc(d.changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Service, b.Service), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	return d.changes
}

type located struct {
	service *Service
	tool    *Tool
}

// toolIndex maps function names to tools. Names are unique in a catalog
// that compiles; where they are not, the first wins.
func toolIndex(l *Lock) map[string]located {
	m := map[string]located{}
	for _, s := range l.Services {
		for _, t := range s.Tools {
			if _, dup := m[t.Name]; !dup {
				m[t.Name] = located{s, t}
			}
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pair matches removed and added items one to one by key, where the key
// names exactly one of each. The result maps the name of each removed item
// that found a partner to the partner.
func pair[T any](removed, added []T, key, name func(T) string) map[string]T {
	type group struct {
		removed, added []T
	}
	groups := map[string]*group{}
	get := func(k string) *group {
		if groups[k] == nil {
			groups[k] = &group{}
		}
		return groups[k]
	}
	for _, r := range removed {
		g := get(key(r))
		g.removed = append(g.removed, r)
	}
	for _, a := range added {
		g := get(key(a))
		g.added = append(g.added, a)
	}
	out := map[string]T{}
	for _, g := range groups {
		if len(g.removed) == 1 && len(g.added) == 1 {
			out[name(g.removed[0])] = g.added[0]
		}
	}
	return out
}

type differ struct {
	changes []Change
	// newService maps each old service to the new one it became: the one
	// of the same name, or of the same directory when it was renamed.
	newService map[*Service]*Service
	oldService map[*Service]*Service
}

func (d *differ) matchServices(old, new *Lock) {
	d.newService, d.oldService = map[*Service]*Service{}, map[*Service]*Service{}
	link := func(o, n *Service) {
		d.newService[o], d.oldService[n] = n, o
	}
	for _, o := range old.Services {
		for _, n := range new.Services {
			if o.Name == n.Name && d.oldService[n] == nil {
				link(o, n)
				break
			}
		}
	}
	for _, o := range old.Services {
		if d.newService[o] != nil {
			continue
		}
		for _, n := range new.Services {
			if o.Dir == n.Dir && d.oldService[n] == nil {
				link(o, n)
				break
			}
		}
	}
}

// add records a change to a tool of the new side, at pos or, where that
// is unknown, at the service, and returns it for the caller to amend.
func (d *differ) add(at located, rule string, path []string, pos catalog.Pos, format string, args ...any) *Change {
	c := Change{
		Rule: rule, Breaking: breaking[rule], Service: at.service.Name, Tool: at.tool.Name,
		Message: fmt.Sprintf(format, args...), Pos: cmp.Or(pos, at.service.Pos), Path: path,
	}
	if len(path) >= 5 && path[0] == "tools" && path[3] == "fields" {
		c.Field = path[4]
	}
	if c.Breaking {
		if o := d.oldService[at.service]; o != nil && majorBumped(o.Version, at.service.Version) {
			c.Allowed = true
			c.Message += fmt.Sprintf("; allowed by the major version bump of service %q from %s to %s", at.service.Name, o.Version, at.service.Version)
		}
	}
	d.changes = append(d.changes, c)
	return &d.changes[len(d.changes)-1]
}

// tool compares a tool with what it became. renamed skips what the rename
// already says.
func (d *differ) tool(o, n located, renamed bool) {
	nt, ot := n.tool, o.tool
	tp := func(keys ...string) []string { return append([]string{"tools", nt.Name}, keys...) }
	if !renamed && ot.MCPName != nt.MCPName {
		prev := d.oldService[n.service]
		switch {
		case prev != nil && prev.Name != n.service.Name && ot.MCPName == catalog.MCPName(prev.Name, ot.Name) && nt.MCPName == catalog.MCPName(n.service.Name, nt.Name):
			d.add(n, "mcp-name-changed", []string{"name"}, n.service.Pos,
				"MCP name of tool %q changed from %q to %q because service %q was renamed %q; MCP clients that call %q break: pin the old name with mcp: name: %q",
				nt.Name, ot.MCPName, nt.MCPName, prev.Name, n.service.Name, ot.MCPName, ot.MCPName)
		case o.service.Name != n.service.Name:
			d.add(n, "mcp-name-changed", tp("mcp", "name"), nt.Pos,
				"MCP name of tool %q changed from %q to %q as it moved from service %q to %q; MCP clients that call %q break: pin the old name with mcp: name: %q",
				nt.Name, ot.MCPName, nt.MCPName, o.service.Name, n.service.Name, ot.MCPName, ot.MCPName)
		default:
			d.add(n, "mcp-name-changed", tp("mcp", "name"), nt.Pos,
				"MCP name of tool %q changed from %q to %q; MCP clients that call %q break", nt.Name, ot.MCPName, nt.MCPName, ot.MCPName)
		}
	}
	switch {
	case ot.Title == nt.Title:
	case ot.Title == "":
		d.add(n, "title-changed", tp("title"), nt.Pos, "tool %q now has the title %q", nt.Name, nt.Title)
	case nt.Title == "":
		d.add(n, "title-changed", tp("title"), nt.Pos, "title %q of tool %q was dropped", ot.Title, nt.Name)
	default:
		d.add(n, "title-changed", tp("title"), nt.Pos, "title of tool %q changed from %q to %q", nt.Name, ot.Title, nt.Title)
	}
	if ot.Description != nt.Description {
		d.add(n, "description-changed", tp("description"), nt.Pos, "description of tool %q changed", nt.Name)
	}
	if a, b := annotations(ot.Annotations), annotations(nt.Annotations); a != b {
		d.add(n, "annotations-changed", tp("annotations"), nt.Pos, "annotations of tool %q changed from %s to %s; MCP clients may now ask before calling it, or stop asking", nt.Name, a, b)
	}
	switch {
	case ot.Task == nt.Task:
	case nt.Task == catalog.TaskRequired:
		d.add(n, "task-required", tp("task"), nt.Pos, "tool %q now has task: %q; clients without MCP's Tasks extension can no longer call it", nt.Name, nt.Task)
	default:
		d.add(n, "task-changed", tp("task"), nt.Pos, "task of tool %q changed from %s to %s", nt.Name, taskText(ot.Task), taskText(nt.Task))
	}
	for _, s := range nt.Scopes {
		if !slices.Contains(ot.Scopes, s) {
			d.add(n, "scope-added", tp("auth", "scopes"), nt.Pos, "tool %q now needs the OAuth scope %q; callers whose tokens lack it can no longer see or call it", nt.Name, s)
		}
	}
	for _, s := range ot.Scopes {
		if !slices.Contains(nt.Scopes, s) {
			d.add(n, "scope-removed", tp("auth", "scopes"), nt.Pos, "tool %q no longer needs the OAuth scope %q", nt.Name, s)
		}
	}
	d.request(n, &ot.Request, &nt.Request)
	d.response(n, ot.Response, nt.Response)
}

// taskText is a tool's task support as a diff message says it.
func taskText(task string) string {
	if task == "" {
		return "none"
	}
	return strconv.Quote(task)
}

func annotations(a *catalog.Annotations) string {
	if a == nil {
		return "none"
	}
	var parts []string
	for _, h := range []struct {
		name string
		v    *bool
	}{{"readOnly", a.ReadOnly}, {"destructive", a.Destructive}, {"idempotent", a.Idempotent}, {"openWorld", a.OpenWorld}} {
		if h.v != nil {
			parts = append(parts, h.name+": "+strconv.FormatBool(*h.v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func fieldIndex(m *Message) map[string]*Field {
	out := map[string]*Field{}
	if m == nil {
		return out
	}
	for _, f := range m.Fields {
		out[f.Name] = f
	}
	return out
}

// diffFields splits two field sets into common, removed and added fields,
// by name, in name order. The fields of a record's items are left out
// when the record itself was removed, added or changed type: that change
// says it all.
func diffFields(o, n *Message) (common [][2]*Field, removed, added []*Field) {
	of, nf := fieldIndex(o), fieldIndex(n)
	for _, name := range sortedKeys(of) {
		if f, ok := nf[name]; ok {
			common = append(common, [2]*Field{of[name], f})
		} else {
			removed = append(removed, of[name])
		}
	}
	for _, name := range sortedKeys(nf) {
		if _, ok := of[name]; !ok {
			added = append(added, nf[name])
		}
	}
	whole := map[string]bool{} // records that changed as a whole
	for _, f := range removed {
		whole[f.Name] = true
	}
	for _, f := range added {
		whole[f.Name] = true
	}
	for _, pr := range common {
		if pr[0].Type != pr[1].Type || pr[0].Items != pr[1].Items {
			whole[pr[0].Name] = true
		}
	}
	inWhole := func(f *Field) bool {
		record, _, ok := recordOf(f.Name)
		return ok && whole[record]
	}
	return common, slices.DeleteFunc(removed, inWhole), slices.DeleteFunc(added, inWhole)
}

// pairIn pairs removed fields of o with added fields of n that are renames
// of them (see renameKey).
func pairIn(o, n *Message, removed, added []*Field) map[string]*Field {
	oldKey, newKey := renameKey(o), renameKey(n)
	keys := map[*Field]string{}
	for _, f := range removed {
		keys[f] = oldKey(f)
	}
	for _, f := range added {
		keys[f] = newKey(f)
	}
	return pair(removed, added, func(f *Field) string { return keys[f] }, func(f *Field) string { return f.Name })
}

// fieldPath is the path of a field from base, the path of its message's
// fields: its name, or for a field of a record's items the record's name,
// items, fields and its own.
func fieldPath(base []string, name string) []string {
	out := slices.Clone(base)
	if record, sub, ok := recordOf(name); ok {
		return append(out, record, "items", "fields", sub)
	}
	return append(out, name)
}

// fieldsPath is the path of the fields that hold a field: base, or for a
// field of a record's items, the record's items' fields.
func fieldsPath(base []string, name string) []string {
	out := slices.Clone(base)
	if record, _, ok := recordOf(name); ok {
		return append(out, record, "items", "fields")
	}
	return out
}

// holderPos is the position of what holds a removed field in the new
// message: the record field, for a field of a record's items, else the
// message.
func holderPos(n *Message, name string) catalog.Pos {
	if record, _, ok := recordOf(name); ok {
		if f := fieldIndex(n)[record]; f != nil && f.Pos.Line > 0 {
			return f.Pos
		}
	}
	return n.Pos
}

// renameKey returns what a removed and an added field of m must share to
// be a rename: the shape, the record they are fields of, if any, and for
// a record field the shapes of its items' fields.
func renameKey(m *Message) func(f *Field) string {
	return func(f *Field) string {
		s := f.shape()
		s.Name = ""
		record, _, ok := recordOf(f.Name)
		if !ok {
			record = ""
		}
		key := record + "|" + valueText(s)
		if f.Items == catalog.Object {
			for _, sub := range m.Fields {
				if r, name, ok := recordOf(sub.Name); ok && r == f.Name {
					s := sub.shape()
					s.Name = name
					key += "|" + valueText(s)
				}
			}
		}
		return key
	}
}

func (d *differ) request(at located, o, n *Message) {
	t := at.tool.Name
	base := []string{"tools", t, "request", "fields"}
	if o.Description != n.Description {
		d.add(at, "description-changed", []string{"tools", t, "request", "description"}, n.Pos, "description of the request of tool %q changed", t)
	}
	common, removed, added := diffFields(o, n)
	renamed := pairIn(o, n, removed, added)
	for _, f := range removed {
		if nf, ok := renamed[f.Name]; ok {
			d.add(at, "field-renamed", fieldPath(base, nf.Name), nf.Pos,
				"request field %q of tool %q was renamed %q; calls that send %q are rejected, and prompts that name it mislead the model", f.Name, t, nf.Name, f.Name)
			continue
		}
		d.add(at, "field-removed", fieldsPath(base, f.Name), holderPos(n, f.Name),
			"request field %q of tool %q was removed; calls that send it are rejected as unknown: keep it, marked deprecated: true, and ignore it in the handler", f.Name, t).Field = f.Name
	}
	paired := map[string]bool{}
	for _, nf := range renamed {
		paired[nf.Name] = true
	}
	for _, f := range added {
		switch {
		case paired[f.Name]:
		case f.Required:
			d.add(at, "field-added-required", fieldPath(base, f.Name), f.Pos,
				"request field %q of tool %q was added as required; calls that omit it, as every existing call does, are rejected: make it optional with required: false and a default", f.Name, t)
		default:
			d.add(at, "field-added-optional", fieldPath(base, f.Name), f.Pos, "optional request field %q was added to tool %q", f.Name, t)
		}
	}
	for _, pr := range common {
		d.requestField(at, pr[0], pr[1], fieldPath(base, pr[1].Name))
	}
}

func (d *differ) requestField(at located, o, n *Field, path []string) {
	t := at.tool.Name
	key := func(k string) []string { return append(slices.Clone(path), k) }
	what := fmt.Sprintf("request field %q of tool %q", n.Name, t)
	if o.Description != n.Description {
		d.add(at, "description-changed", key("description"), n.Pos, "description of %s changed", what)
	}
	if o.Type != n.Type || o.Items != n.Items {
		k := "type"
		if o.Type == n.Type {
			k = "items"
		}
		consequence := fmt.Sprintf("calls that send %s are rejected", article(typeName(o)))
		if n.Type == catalog.JSON {
			// Any value passes; what the handler gets changes.
			consequence = "calls still pass, but the handler gets any JSON value, and a string that holds JSON as that value"
		}
		d.add(at, "field-type-changed", key(k), n.Pos, "%s changed from %s to %s; %s", what, typeName(o), typeName(n), consequence)
		return // the constraints of another type do not compare
	}
	switch {
	case !o.Required && n.Required:
		d.add(at, "field-now-required", key("required"), n.Pos, "%s is now required; calls that omit it are rejected: keep it optional, with a default", what)
	case o.Required && !n.Required:
		d.add(at, "field-now-optional", key("required"), n.Pos, "%s is now optional", what)
	}
	if !n.Required && !o.Required && valueText(o.Default) != valueText(n.Default) {
		d.add(at, "default-changed", key("default"), n.Pos, "default of %s changed from %s to %s; calls that omit it now get the new value", what, formatValue(o.Default), formatValue(n.Default))
	}
	d.enum(at, o, n, key("enum"), what)
	for _, b := range bounds(o, n) {
		if b.tighter {
			d.add(at, "bound-tightened", key(b.key), n.Pos, "%s of %s %s; calls within the old bound are rejected", b.key, what, b.change)
		} else {
			d.add(at, "bound-loosened", key(b.key), n.Pos, "%s of %s %s", b.key, what, b.change)
		}
	}
	switch {
	case o.Pattern == n.Pattern:
	case n.Pattern == "":
		d.add(at, "bound-loosened", key("pattern"), n.Pos, "pattern %q of %s was dropped", o.Pattern, what)
	case o.Pattern == "":
		d.add(at, "pattern-changed", key("pattern"), n.Pos, "%s now has the pattern %q; calls with values that do not match it are rejected", what, n.Pattern)
	default:
		d.add(at, "pattern-changed", key("pattern"), n.Pos, "pattern of %s changed from %q to %q; calls with values that matched only the old one are rejected", what, o.Pattern, n.Pattern)
	}
	switch {
	case o.Format == n.Format:
	case n.Format == "":
		d.add(at, "bound-loosened", key("format"), n.Pos, "format %q of %s was dropped", o.Format, what)
	case o.Format == "":
		d.add(at, "format-changed", key("format"), n.Pos, "%s now has the format %q; calls with values of another form are rejected", what, n.Format)
	default:
		d.add(at, "format-changed", key("format"), n.Pos, "format of %s changed from %q to %q; calls with values of the old form are rejected", what, o.Format, n.Format)
	}
}

func (d *differ) enum(at located, o, n *Field, path []string, what string) {
	switch {
	case o.Enum == nil && n.Enum == nil:
	case o.Enum == nil:
		d.add(at, "enum-added", path, n.Pos, "%s now takes only the values %s; calls with any other value are rejected", what, catalog.FormatValues(n.Enum))
	case n.Enum == nil:
		d.add(at, "enum-widened", path, n.Pos, "the enum %s of %s was dropped: it takes any value of its type", catalog.FormatValues(o.Enum), what)
	default:
		gone, extra := setDiff(o.Enum, n.Enum), setDiff(n.Enum, o.Enum)
		if len(gone) > 0 {
			d.add(at, "enum-value-removed", path, n.Pos, "%s no longer takes %s; calls with %s are rejected", what, joinValues(gone), plural(len(gone), "it", "them"))
		}
		if len(extra) > 0 {
			d.add(at, "enum-widened", path, n.Pos, "%s now also takes %s", what, joinValues(extra))
		}
	}
}

func (d *differ) response(at located, o, n *Message) {
	t := at.tool.Name
	base := []string{"tools", t, "response", "fields"}
	empty := &Message{}
	if o == nil {
		o = empty
	}
	if n == nil {
		n = empty
	}
	if o.Description != n.Description && o != empty && n != empty {
		d.add(at, "description-changed", []string{"tools", t, "response", "description"}, n.Pos, "description of the response of tool %q changed", t)
	}
	common, removed, added := diffFields(o, n)
	for _, f := range removed {
		path := fieldsPath(base, f.Name)
		if n == empty {
			path = []string{"tools", t}
		}
		d.add(at, "response-field-removed", path, cmp.Or(holderPos(n, f.Name), at.tool.Pos), "response field %q of tool %q was removed; clients and models that read it break", f.Name, t).Field = f.Name
	}
	for _, f := range added {
		d.add(at, "response-field-added", fieldPath(base, f.Name), f.Pos, "response field %q was added to tool %q", f.Name, t)
	}
	for _, pr := range common {
		d.responseField(at, pr[0], pr[1], fieldPath(base, pr[1].Name))
	}
}

// responseField compares a response field the other way round from a
// request field: what a reader can rely on must not widen.
func (d *differ) responseField(at located, o, n *Field, path []string) {
	t := at.tool.Name
	key := func(k string) []string { return append(slices.Clone(path), k) }
	what := fmt.Sprintf("response field %q of tool %q", n.Name, t)
	if o.Description != n.Description {
		d.add(at, "description-changed", key("description"), n.Pos, "description of %s changed", what)
	}
	if o.Type != n.Type || o.Items != n.Items {
		k := "type"
		if o.Type == n.Type {
			k = "items"
		}
		d.add(at, "response-field-changed", key(k), n.Pos, "%s changed from %s to %s; clients that read %s break", what, typeName(o), typeName(n), article(typeName(o)))
		return
	}
	switch {
	case o.Required && !n.Required:
		d.add(at, "response-field-changed", key("required"), n.Pos, "%s is now optional; clients that expect it in every result break", what)
	case !o.Required && n.Required:
		d.add(at, "response-field-narrowed", key("required"), n.Pos, "%s is now in every result", what)
	}
	switch {
	case o.Enum == nil && n.Enum == nil:
	case n.Enum == nil:
		d.add(at, "response-field-changed", key("enum"), n.Pos, "the enum %s of %s was dropped; clients that handle only those values break", catalog.FormatValues(o.Enum), what)
	case o.Enum == nil:
		d.add(at, "response-field-narrowed", key("enum"), n.Pos, "%s now holds only the values %s", what, catalog.FormatValues(n.Enum))
	default:
		if extra := setDiff(n.Enum, o.Enum); len(extra) > 0 {
			d.add(at, "response-field-changed", key("enum"), n.Pos, "%s may now hold %s; clients that handle only the old values break", what, joinValues(extra))
		}
		if gone := setDiff(o.Enum, n.Enum); len(gone) > 0 {
			d.add(at, "response-field-narrowed", key("enum"), n.Pos, "%s no longer holds %s", what, joinValues(gone))
		}
	}
	for _, b := range bounds(o, n) {
		if b.tighter {
			d.add(at, "response-field-narrowed", key(b.key), n.Pos, "%s of %s %s", b.key, what, b.change)
		} else {
			d.add(at, "response-field-changed", key(b.key), n.Pos, "%s of %s %s; clients that rely on the old bound break", b.key, what, b.change)
		}
	}
	for _, s := range []struct{ key, o, n string }{{"pattern", o.Pattern, n.Pattern}, {"format", o.Format, n.Format}} {
		switch {
		case s.o == s.n:
		case s.o == "":
			d.add(at, "response-field-narrowed", key(s.key), n.Pos, "%s now has the %s %q", what, s.key, s.n)
		default:
			d.add(at, "response-field-changed", key(s.key), n.Pos, "%s of %s changed from %q to %q; clients that rely on the old one break", s.key, what, s.o, s.n)
		}
	}
}

// A boundChange is one bound that moved.
type boundChange struct {
	key     string
	tighter bool
	change  string // "went up from 1 to 2", "was added: 5", "was dropped (was 5)"
}

// bounds compares the numeric bounds and uniqueItems of two fields of one
// type.
func bounds(o, n *Field) []boundChange {
	var out []boundChange
	type bound struct {
		key   string
		o, n  *float64
		lower bool // a lower bound: raising it tightens
	}
	i2f := func(p *int64) *float64 {
		if p == nil {
			return nil
		}
		f := float64(*p)
		return &f
	}
	for _, b := range []bound{
		{"minimum", o.Minimum, n.Minimum, true},
		{"exclusiveMinimum", o.ExclusiveMinimum, n.ExclusiveMinimum, true},
		{"maximum", o.Maximum, n.Maximum, false},
		{"exclusiveMaximum", o.ExclusiveMaximum, n.ExclusiveMaximum, false},
		{"minLength", i2f(o.MinLength), i2f(n.MinLength), true},
		{"maxLength", i2f(o.MaxLength), i2f(n.MaxLength), false},
		{"minItems", i2f(o.MinItems), i2f(n.MinItems), true},
		{"maxItems", i2f(o.MaxItems), i2f(n.MaxItems), false},
	} {
		switch {
		case b.o == nil && b.n == nil:
		case b.o == nil:
			out = append(out, boundChange{b.key, true, "was added: " + catalog.FormatNumber(*b.n)})
		case b.n == nil:
			out = append(out, boundChange{b.key, false, "was dropped (it was " + catalog.FormatNumber(*b.o) + ")"})
		case *b.o != *b.n:
			up := *b.n > *b.o
			dir := "went down"
			if up {
				dir = "went up"
			}
			out = append(out, boundChange{b.key, up == b.lower, fmt.Sprintf("%s from %s to %s", dir, catalog.FormatNumber(*b.o), catalog.FormatNumber(*b.n))})
		}
	}
	switch {
	case !o.UniqueItems && n.UniqueItems:
		out = append(out, boundChange{"uniqueItems", true, "was set"})
	case o.UniqueItems && !n.UniqueItems:
		out = append(out, boundChange{"uniqueItems", false, "was dropped"})
	}
	switch {
	case !o.Object && n.Object:
		out = append(out, boundChange{"object", true, "was set: only a JSON object is a value of it now"})
	case o.Object && !n.Object:
		out = append(out, boundChange{"object", false, "was dropped: any JSON value is a value of it now"})
	}
	return out
}

// majorBumped reports whether a version went up in what semver calls
// incompatible: the major version, or the minor one of a 0.y version.
func majorBumped(old, new string) bool {
	om, on, ok1 := compatVersion(old)
	nm, nn, ok2 := compatVersion(new)
	if !ok1 || !ok2 {
		return false
	}
	return nm > om || nm == 0 && om == 0 && nn > on
}

func compatVersion(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	return major, minor, err1 == nil && err2 == nil
}

func typeName(f *Field) string {
	switch {
	case f.Type == catalog.Array && f.Items == catalog.Object:
		return "array of records"
	case f.Type == catalog.Array:
		return "array of " + string(f.Items)
	}
	return string(f.Type)
}

func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

func formatValue(v any) string {
	if v == nil {
		return "none"
	}
	return catalog.FormatValue(v)
}

// setDiff returns the values of a that are not in b.
func setDiff(a, b []any) []any {
	var out []any
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y any) bool { return valueText(x) == valueText(y) }) {
			out = append(out, x)
		}
	}
	return out
}

func joinValues(vs []any) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = catalog.FormatValue(v)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
