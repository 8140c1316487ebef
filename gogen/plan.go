package gogen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
)

// generator holds the Go names of one service's declarations, decided
// before any code is written.
type generator struct {
	svc   *catalog.Service
	tools []*tool
	// names maps each generated package-level name to what it was made
	// from, to catch two contract names that become one Go name.
	names map[string]origin
	errs  diag.List
	// plugin is set for a main package, which runs as a handler plugin and
	// gets Serve.
	plugin bool
	// inContractDir is set when the file goes into the contract's
	// directory rather than the handler's (see Files).
	inContractDir bool
}

type tool struct {
	*catalog.Tool
	method   string
	request  message
	response *message // nil when the contract declares no response
}

type message struct {
	*catalog.Message
	typeName   string
	isResponse bool
	fields     []*field
}

type field struct {
	*catalog.Field
	goName string
	enum   *enum   // nil without an enum
	record *record // the type of the items of a record field; nil for any other
}

// record is the Go struct of the items of a record field.
type record struct {
	typeName string
	fields   []*field
	// inRequest and inResponse say where the record field is; one type
	// serves a field of the same name and fields in both.
	inRequest, inResponse bool
	field                 string
	description           string
}

type enum struct {
	typeName string
	goType   string // string or int
	consts   []enumConst
	// inRequest and inResponse say where the enum's field is; one type
	// serves a field of the same name and values in both.
	inRequest, inResponse bool
	field                 string
}

type enumConst struct {
	name, value string // value as a Go literal
}

// origin is a contract element that a Go name comes from, as an error
// message names it.
type origin struct {
	what string
	pos  catalog.Pos
}

func (g *generator) errorf(pos catalog.Pos, format string, args ...any) {
	g.errs = append(g.errs, diag.Diagnostic{Pos: position(pos), Message: fmt.Sprintf(format, args...)})
}

// position is a contract position as diag prints it.
func position(p catalog.Pos) diag.Position {
	return diag.Position{File: p.File, Line: p.Line, Column: p.Column}
}

// claim takes name for o in ns, or reports that something else has it.
func (g *generator) claim(ns map[string]origin, name string, o origin) bool {
	if prev, ok := ns[name]; ok {
		where := ""
		if prev.pos.File != "" && prev.pos != o.pos {
			where = " (" + position(prev.pos).String() + ")"
		}
		g.errorf(o.pos, "%s and %s%s would both be %s in Go; rename one of them", o.what, prev.what, where, name)
		return false
	}
	ns[name] = o
	return true
}

// plan decides every Go name, in source order, and reports the names that
// Go cannot use or cannot tell apart.
func (g *generator) plan() {
	for _, name := range []string{"Tools", "Handlers", "Serve"} {
		g.names[name] = origin{what: "the generated " + name, pos: g.svc.Pos}
	}
	methods := map[string]origin{}
	for _, ct := range sortedByPos(g.svc.Tools, g.svc.Pos.File, func(t *catalog.Tool) (catalog.Pos, string) { return t.Pos, t.Name }) {
		t := &tool{Tool: ct, method: goName(ct.Name)}
		what := fmt.Sprintf("tool %q", ct.Name)
		if !g.validName(t.method, what, ct.Pos) || !g.claim(methods, t.method, origin{what, ct.Pos}) {
			continue
		}
		t.request = g.planMessage(t, &ct.Request, false)
		if ct.Response != nil {
			r := g.planMessage(t, ct.Response, true)
			t.response = &r
		}
		g.tools = append(g.tools, t)
	}
}

func (g *generator) planMessage(t *tool, cm *catalog.Message, isResponse bool) message {
	m := message{Message: cm, typeName: t.method + "Request", isResponse: isResponse}
	kind := "request"
	if isResponse {
		m.typeName, kind = t.method+"Response", "response"
	}
	pos := cm.Pos
	if pos.File == "" {
		pos = t.Pos
	}
	g.claim(g.names, m.typeName, origin{fmt.Sprintf("the %s type of tool %q", kind, t.Name), pos})
	m.fields = g.planFields(t, cm.Fields, m.typeName, kind, "", t.method, isResponse)
	return m
}

// planFields names the Go fields of a message's or a record's fields, of
// the struct typeName; within is "" for a message, and the record field's
// name for a record's, and prefix starts the names of enum and record
// types (Tool, or ToolRecord).
func (g *generator) planFields(t *tool, cfs []*catalog.Field, typeName, kind, within, prefix string, isResponse bool) []*field {
	fields := map[string]origin{}
	if isResponse && requiredArrays(&catalog.Message{Fields: cfs}) != nil {
		fields["MarshalJSON"] = origin{what: "the method MarshalJSON of " + typeName}
	}
	var out []*field
	for _, cf := range sortedByPos(cfs, g.svc.Pos.File, func(f *catalog.Field) (catalog.Pos, string) { return f.Pos, f.Name }) {
		f := &field{Field: cf, goName: goName(cf.Name)}
		name := cf.Name
		if within != "" {
			name = within + "[]." + cf.Name
		}
		what := fmt.Sprintf("%s field %q of tool %q", kind, name, t.Name)
		if !g.validName(f.goName, what, cf.Pos) || !g.validType(cf, what, within != "") || !g.claim(fields, f.goName, origin{what, cf.Pos}) {
			continue
		}
		if len(cf.Enum) > 0 {
			f.enum = g.planEnum(t, f, prefix, what, isResponse)
			if f.enum != nil && within != "" {
				f.enum.field = name
			}
		}
		if cf.IsRecord() {
			f.record = g.planRecord(t, f, what, isResponse)
		}
		out = append(out, f)
	}
	return out
}

// planRecord names the struct of a record field's items, <Tool><Field>Item,
// and its fields. A response field whose request namesake is a record of
// the same fields shares its type; one with other fields gets
// <Tool>Response<Field>Item.
func (g *generator) planRecord(t *tool, f *field, what string, isResponse bool) *record {
	r := &record{typeName: t.method + f.goName + "Item", field: f.Name, description: f.Description, inRequest: !isResponse, inResponse: isResponse}
	prefix := t.method + f.goName
	if isResponse {
		for _, rf := range t.request.fields {
			if rf.record == nil || rf.Name != f.Name {
				continue
			}
			if sameRecord(rf.Field, f.Field) {
				rf.record.inResponse = true
				return rf.record
			}
			r.typeName = t.method + "Response" + f.goName + "Item"
			prefix = t.method + "Response" + f.goName
		}
	}
	if !g.claim(g.names, r.typeName, origin{"the item type of " + what, f.Pos}) {
		return nil
	}
	kind := "request"
	if isResponse {
		kind = "response"
	}
	r.fields = g.planFields(t, f.Fields, r.typeName, kind, f.Name, prefix, isResponse)
	return r
}

// sameRecord reports whether two record fields, of a request and of a
// response, can have items of the same Go struct: the same fields, of the
// same types, enums and requiredness, and no default (a request's field
// with a default is a value, which the runtime fills in; a response's
// optional field is a pointer, which nil leaves out).
func sameRecord(a, b *catalog.Field) bool {
	return slices.EqualFunc(a.Fields, b.Fields, func(x, y *catalog.Field) bool {
		return x.Name == y.Name && x.Type == y.Type && x.Items == y.Items && x.Required == y.Required &&
			x.Default == nil && y.Default == nil && jsonString(x.Enum) == jsonString(y.Enum)
	})
}

// planEnum names the type and the constants of a field's enum: type
// <Tool><Field>, constants <Tool><Field><Value>. A response field whose
// request namesake has the same enum shares its type; one with another
// enum gets <Tool>Response<Field>.
func (g *generator) planEnum(t *tool, f *field, prefix, what string, isResponse bool) *enum {
	base := f.Type
	if base == catalog.Array {
		base = f.Items
	}
	e := &enum{typeName: prefix + f.goName, field: f.Name, inRequest: !isResponse, inResponse: isResponse}
	switch base {
	case catalog.String:
		e.goType = "string"
	case catalog.Integer:
		e.goType = "int"
	default:
		return nil // the compiler allows enums on strings and integers only
	}
	var suffixes []string
	for _, v := range f.Enum {
		suffix, lit, ok := enumValue(v, base)
		if !ok {
			g.errorf(f.Pos, "enum value %s of %s has no letters or digits to name a Go constant after", jsonString(v), what)
			return nil
		}
		suffixes = append(suffixes, suffix)
		e.consts = append(e.consts, enumConst{value: lit})
	}
	if isResponse && prefix == t.method {
		for _, rf := range t.request.fields {
			if rf.enum == nil || rf.Name != f.Name {
				continue
			}
			if rf.enum.goType == e.goType && slices.EqualFunc(rf.enum.consts, e.consts, func(a, b enumConst) bool { return a.value == b.value }) {
				rf.enum.inResponse = true
				return rf.enum
			}
			e.typeName = t.method + "Response" + f.goName
		}
	}
	if !g.claim(g.names, e.typeName, origin{"the enum type of " + what, f.Pos}) {
		return nil
	}
	for i, v := range f.Enum {
		e.consts[i].name = e.typeName + suffixes[i]
		if !g.claim(g.names, e.consts[i].name, origin{fmt.Sprintf("enum value %s of %s", jsonString(v), what), f.Pos}) {
			return nil
		}
	}
	return e
}

// validName reports a contract name that makes no exported Go identifier:
// one that the compiler would have refused, in a catalog made elsewhere.
func (g *generator) validName(name, what string, pos catalog.Pos) bool {
	if token.IsIdentifier(name) && token.IsExported(name) {
		return true
	}
	g.errorf(pos, "%s cannot be named in Go: a name must start with a letter", what)
	return false
}

// validType reports a field type that the contract language does not
// have, in a catalog made elsewhere: in a record, inRecord, a record is
// one.
func (g *generator) validType(f *catalog.Field, what string, inRecord bool) bool {
	scalar := func(t catalog.Type) bool {
		return t == catalog.String || t == catalog.Integer || t == catalog.Number || t == catalog.Boolean
	}
	switch {
	case scalar(f.Type), f.Type == catalog.JSON:
		return true
	case f.Type == catalog.Array && scalar(f.Items):
		return true
	case f.IsRecord() && inRecord:
		g.errorf(f.Pos, "%s is a record inside a record; records are one level deep", what)
	case f.IsRecord():
		return true
	case f.Type == catalog.Array:
		g.errorf(f.Pos, "%s is an array of %q, which is not a scalar type", what, f.Items)
	default:
		g.errorf(f.Pos, "%s has the type %q, which the contract language does not have", what, f.Type)
	}
	return false
}

// enumValue returns the suffix of an enum value's constant name, and the
// value as a Go literal.
func enumValue(v any, t catalog.Type) (name, lit string, ok bool) {
	if t == catalog.Integer {
		n, ok := integer(v)
		if !ok {
			return "", "", false
		}
		if n < 0 {
			return "Minus" + strconv.FormatInt(-n, 10), strconv.FormatInt(n, 10), true
		}
		return strconv.FormatInt(n, 10), strconv.FormatInt(n, 10), true
	}
	s, isString := v.(string)
	if !isString {
		return "", "", false
	}
	if s == "" {
		return "Empty", `""`, true
	}
	name = goName(s)
	return name, strconv.Quote(s), name != ""
}

// integer returns an integer value of the catalog: an int64, or a float64
// with no fraction when the catalog was read from JSON.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// sortedByPos returns xs in source order: the service's own file first,
// then by file, line and column; the name breaks ties, and orders a
// catalog without positions.
func sortedByPos[T any](xs []T, mainFile string, key func(T) (catalog.Pos, string)) []T {
	out := slices.Clone(xs)
	rank := func(p catalog.Pos) int {
		if p.File == mainFile {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(out, func(a, b T) int {
		pa, na := key(a)
		pb, nb := key(b)
		return cmp.Or(cmp.Compare(rank(pa), rank(pb)), strings.Compare(pa.File, pb.File),
			cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Column, pb.Column), strings.Compare(na, nb))
	})
	return out
}

// requiredArrays returns the required array fields of a response: a nil
// slice would encode as null, which the contract does not allow.
func requiredArrays(m *catalog.Message) []*catalog.Field {
	var out []*catalog.Field
	for _, f := range m.Fields {
		if f.Required && f.Type == catalog.Array {
			out = append(out, f)
		}
	}
	return out
}
