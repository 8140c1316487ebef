package compiler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolc/toolc/diag"
)

// descriptionRule requires a description wherever a model reads one: it is
// all that tells a model what a tool or a parameter is for.
var descriptionRule = &Rule{
	ID:       "description",
	Doc:      "service, tool and every field have a non-empty description",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			if len(s.pkg.loadErrs) == 0 {
				checkDescription(p, s.root, "service", true)
			}
		}
		for t := range p.tools() {
			where := fmt.Sprintf("tool %q", t.node.label)
			checkDescription(p, t.node, where, true)
			for _, msg := range []string{"request", "response"} {
				checkDescription(p, t.node.get(msg), msg+" of "+where, false)
			}
		}
		for f := range p.fields() {
			if !nestedObject(f.node) {
				checkDescription(p, f.node, f.describe(), true)
			}
		}
	},
}

func checkDescription(p *Pass, n *node, where string, required bool) {
	if n == nil || n.kind != kStruct {
		return
	}
	d := n.get("description")
	switch {
	case d == nil:
		if required {
			p.reportf(n.pos, "%s has no description; add description: \"...\" saying what it is for", where)
		}
	case d.kind == kString && strings.TrimSpace(d.str) == "":
		p.reportf(d.pos, "description of %s is blank; say what it is for", where)
	case d.kind != kString && d.kind != kError && d.kind != kIncomplete:
		p.reportf(d.pos, "description of %s must be a string, not %s", where, d.kind)
	}
}

// singleRequestRule requires exactly one request per tool: a model fills in
// one argument object per call, so a second request type is ambiguous.
var singleRequestRule = &Rule{
	ID:       "single-request",
	Doc:      "exactly one request per tool (a request2: or requests: key gets this, not schema)",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for t := range p.tools() {
			if t.node.kind != kStruct {
				continue
			}
			name := t.node.label
			req := t.node.get("request")
			others := 0
			for _, k := range t.node.fields {
				if k.label == "request" || !strings.Contains(strings.ToLower(k.label), "request") {
					continue
				}
				others++
				if req == nil {
					// One misnamed request is one problem, not a missing
					// request plus an extra one.
					p.reportf(k.pos, "tool %q declares %q but no request; a tool takes exactly one request: name it request, a struct with fields", name, k.label)
				} else {
					p.reportf(k.pos, "tool %q declares %q besides its request; a tool takes exactly one request: merge the fields into request, or split the tool in two", name, k.label)
				}
			}
			switch {
			case req == nil && others > 0:
			case req == nil:
				p.reportf(t.node.pos, "tool %q has no request; declare exactly one: request: fields: {...} (fields: {} when it takes no arguments)", name)
			case req.kind == kList:
				p.reportf(req.pos, "request of tool %q is a list; a tool takes exactly one request: a struct with fields", name)
			case req.kind != kStruct && req.kind != kError && req.kind != kIncomplete:
				p.reportf(req.pos, "request of tool %q must be a struct with fields, not %s", name, req.kind)
			}
		}
	},
}

// nestedTypes are types that models and providers handle badly as
// parameters: toolc asks for flat fields instead.
var nestedTypes = map[string]bool{"object": true, "map": true, "struct": true, "dict": true, "record": true, "any": true}

// scalarTypes are the element types an array may have.
var scalarTypes = []string{"string", "integer", "number", "boolean"}

// flatFieldsRule keeps requests flat: annotation-based libraries silently
// turn nested types into a bare object, and models fill nested objects in
// less reliably than flat parameters.
var flatFieldsRule = &Rule{
	ID:       "flat-fields",
	Doc:      "only scalars, arrays of scalars and records (arrays of flat objects, items: fields: {...}, one level deep): no object, no array without items, no arrays of arrays, no record in a record",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for f := range p.fields() {
			n := f.node
			if n.kind != kStruct {
				continue
			}
			name := n.label
			typ := ""
			if t := n.get("type"); t != nil && t.kind == kString {
				typ = t.str
				if nestedTypes[typ] {
					p.reportf(t.pos, "%s has type %q; contracts are flat: split it into scalar fields such as %s_id and %s_name, or, when its value is really free-form (a query document, a JSON patch), write type: \"json\" (with object: true for an object)", f.describe(), typ, name, name)
				}
			}
			var objects []string
			var objectPos *node
			for _, k := range nestedKeys(n) {
				if nestedTypes[typ] {
					break // the type says it already: one object, one diagnostic
				}
				if k.label == "fields" || k.label == "properties" {
					p.reportf(k.pos, "%s nests %s; contracts are flat: move them up into the %s, prefixed with %s_", f.describe(), k.label, f.message, name)
					continue
				}
				if objectPos == nil {
					objectPos = k
				}
				objects = append(objects, strconv.Quote(k.label))
			}
			if objectPos != nil {
				// One diagnostic for the nested object, not one per member.
				p.reportf(objectPos.pos, "%s nests %s as %s; contracts are flat: make %s fields of the %s, such as %s_%s",
					f.describe(), strings.Join(objects, " and "), plural(len(objects), "an object", "objects"), plural(len(objects), "it", "them"), f.message, name, objectPos.label)
			}
			items := n.get("items")
			switch {
			case typ == "array" && items == nil:
				p.reportf(n.pos, "array %s has no items; add items: one of %s, or fields: {...} for an array of records", f.describe(), strings.Join(scalarTypes, ", "))
			case typ != "array" && typ != "" && !nestedTypes[typ] && items != nil:
				p.reportf(items.pos, "items is only for array fields, and %s is of type %q", f.describe(), typ)
			case items == nil || typ != "array":
			case items.kind == kStruct && isScalarEnumItems(items):
				// JSON Schema's way of writing a multi-select.
				p.reportf(items.pos, "items of %s must be a type name: write items: %q, and the enum on the field (enum: [...] lists the values of the items)",
					f.describe(), items.get("type").str)
			case isRecord(n) && f.record != nil:
				p.reportf(items.pos, "%s is a record inside the record %q; records are one level deep: move its fields up into %q, prefixed with %s_, or make it a record field of the %s",
					f.describe(), f.record.label, f.record.label, name, f.message)
			case isRecord(n):
				checkRecordItems(p, f, items)
			case items.kind == kStruct && (items.get("properties") != nil || stringAt(items, "type") == "object"):
				// JSON Schema's way of writing an array of objects.
				p.reportf(items.pos, "items of %s is written as a JSON Schema object; write an array of records as items: fields: {...}, with each field as a request's", f.describe())
			case items.kind == kStruct || items.kind == kList:
				p.reportf(items.pos, "items of %s must be a scalar type name, or fields: {...} for an array of records; arrays of arrays are not flat: use several array fields side by side", f.describe())
			case items.kind == kString && items.str != "array" && nestedTypes[items.str]:
				p.reportf(items.pos, "%s is an array of %s; for an array of objects write items: fields: {...}, a record with each field as a request's", f.describe(), items.str)
			case items.kind == kString && items.str == "array":
				p.reportf(items.pos, "%s is an array of array; only arrays of %s, and records, are flat", f.describe(), strings.Join(scalarTypes, ", "))
			case items.kind == kString && !contains(scalarTypes, items.str):
				p.reportf(items.pos, "items of %s is %q%s; want one of %s", f.describe(), items.str, suggestType(items.str, scalarTypes), strings.Join(scalarTypes, ", "))
			case items.kind != kString && items.kind != kError && items.kind != kIncomplete:
				p.reportf(items.pos, "items of %s must be a type name such as \"string\", not %s", f.describe(), items.kind)
			}
		}
	},
}

// checkRecordItems checks the items of a record field: fields: {...} with
// at least one field, and nothing else.
func checkRecordItems(p *Pass, f field, items *node) {
	for _, k := range items.fields {
		if k.label != "fields" {
			p.reportf(k.pos, "items of record %s has %s; a record's items hold only fields: {...}%s", f.describe(), k.label, suggest(k.label, []string{"fields"}))
		}
	}
	switch fields := items.get("fields"); {
	case fields.kind == kError || fields.kind == kIncomplete:
	case fields.kind != kStruct:
		p.reportf(fields.pos, "fields of the items of %s must be a struct of fields, such as {text: {type: \"string\", description: \"...\"}}, not %s", f.describe(), fields.kind)
	case len(fields.fields) == 0:
		p.reportf(fields.pos, "the items of record %s have no fields; give them at least one, as a request's", f.describe())
	}
}

// nestedKey reports whether an unknown key of a field nests values in it:
// fields: or properties: as in JSON Schema, or a struct of its own, as a
// CUE or Go type would.
func nestedKey(k *node) bool {
	return k.label == "fields" || k.label == "properties" || k.kind == kStruct
}

// nestedKeys returns the unknown keys of a field that nest values in it.
func nestedKeys(n *node) []*node {
	var out []*node
	for _, k := range n.fields {
		if _, known := fieldShape.keys[k.label]; !known && nestedKey(k) {
			out = append(out, k)
		}
	}
	return out
}

// nestedObject reports whether a field is a nested object written as CUE,
// {street: {...}, city: {...}}, rather than a field with a type: its
// missing type and description are the nesting, which flat-fields reports.
func nestedObject(n *node) bool {
	return n.kind == kStruct && n.get("type") == nil && len(nestedKeys(n)) > 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// isScalarEnumItems reports items written as {type: "string", enum: [...]},
// with a string or integer type and nothing but an enum beside it.
func isScalarEnumItems(items *node) bool {
	t := items.get("type")
	if t == nil || t.kind != kString || t.str != "string" && t.str != "integer" {
		return false
	}
	for _, k := range items.fields {
		if k.label != "type" && k.label != "enum" {
			return false
		}
	}
	return items.get("enum") != nil
}
