package upstream

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/validate"
)

// Stated is a live tool of an upstream server as a contract states it:
// the same conversion makes the contract that toolc import writes and the
// live side of every pin check, so a server that has not changed matches
// the contract that was imported from it.
type Stated struct {
	// Name is the tool's name on the server.
	Name string
	// Tool is the tool as a contract declares it, with its key as Name and
	// MCPName set where the key cannot spell the server's name; nil when
	// the tool cannot be expressed (Missing says why).
	Tool *catalog.Tool
	// Changes say where the contract states the tool otherwise than the
	// server does, one sentence each (a format it cannot check, a null it
	// reads as absent).
	Changes []string
	// Missing says what the contract language would need to express the
	// tool; empty when it can.
	Missing string
}

// NoDescription is the description a contract gives what the server left
// undescribed: the contract language requires one, and a placeholder that
// says so is honest to the model and stable for the pin check.
const NoDescription = "(no description from the server)"

var (
	toolKeyRE  = regexp.MustCompile(`^[a-z][a-zA-Z0-9_-]{0,63}$`)
	mcpNameRE  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	fieldKeyRE = regexp.MustCompile(`^([a-z][a-z0-9_]{0,63}|[a-z][a-zA-Z0-9]{0,63})$`)
)

// ToolKey returns the contract key of a server's tool name, and the
// mcp.name to pin when the key cannot spell it; ok is false when neither
// can (a name with a dot or a slash).
func ToolKey(name string) (key, mcpName string, ok bool) {
	if toolKeyRE.MatchString(name) {
		return name, "", true
	}
	if !mcpNameRE.MatchString(name) {
		return "", "", false
	}
	key = strings.ToLower(name[:1]) + name[1:]
	if key[0] < 'a' || key[0] > 'z' {
		key = "tool_" + key
	}
	if len(key) > 64 || !toolKeyRE.MatchString(key) {
		return "", "", false
	}
	return key, name, true
}

// UpstreamName returns the name of a contract's tool on its upstream
// server: its pinned mcp.name, or its key.
func UpstreamName(t *catalog.Tool) string {
	if t.MCPName != "" {
		return t.MCPName
	}
	return t.Name
}

// State converts a live tool.
func State(t *mcp.Tool) Stated {
	s := Stated{Name: t.Name}
	key, mcpName, ok := ToolKey(t.Name)
	if !ok {
		s.Missing = fmt.Sprintf("a name a contract can spell: %q is neither a tool key nor an mcp.name (letters, digits, _ and -, at most 64)", t.Name)
		return s
	}
	ct := &catalog.Tool{Name: key, MCPName: mcpName, Description: t.Description, Title: t.Title}
	if strings.TrimSpace(ct.Description) == "" {
		ct.Description = NoDescription
		s.Changes = append(s.Changes, "the server gives no description; the contract says so")
	}
	if a := t.Annotations; a != nil {
		if ct.Title == "" {
			ct.Title = a.Title
		}
		ct.Annotations = annotations(a)
	}
	c := &converter{}
	req, err := c.message(t.InputSchema, "inputSchema")
	if err != nil {
		s.Missing = err.Error()
		return s
	}
	ct.Request = *req
	if t.OutputSchema != nil {
		out := &converter{what: "response field"}
		resp, err := out.message(t.OutputSchema, "outputSchema")
		if err != nil {
			s.Changes = append(s.Changes, fmt.Sprintf("its outputSchema cannot be expressed (it needs %s), so its results are not checked", err))
		} else {
			ct.Response = resp
			s.Changes = append(s.Changes, out.changes...)
		}
	}
	s.Changes = append(s.Changes, c.changes...)
	s.Tool = ct
	return s
}

// annotations converts MCP's hints. go-sdk decodes readOnlyHint and
// idempotentHint as plain bools, so false and absent are one: both are
// left unset, and Normalize does the same to the contract's side.
func annotations(a *mcp.ToolAnnotations) catalog.Annotations {
	var out catalog.Annotations
	yes := true
	if a.ReadOnlyHint {
		out.ReadOnly = &yes
	}
	if a.IdempotentHint {
		out.Idempotent = &yes
	}
	if a.DestructiveHint != nil {
		v := *a.DestructiveHint
		out.Destructive = &v
	}
	if a.OpenWorldHint != nil {
		v := *a.OpenWorldHint
		out.OpenWorld = &v
	}
	return out
}

// Normalize makes a contract's tool comparable with a State: annotations
// that say false where MCP's default is false are unset.
func Normalize(t *catalog.Tool) *catalog.Tool {
	cp := *t
	if cp.Annotations.ReadOnly != nil && !*cp.Annotations.ReadOnly {
		cp.Annotations.ReadOnly = nil
	}
	if cp.Annotations.Idempotent != nil && !*cp.Annotations.Idempotent {
		cp.Annotations.Idempotent = nil
	}
	return &cp
}

type converter struct {
	changes []string
	// what names a field in messages: "field", or "response field".
	what string
}

func (c *converter) changef(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.what != "" {
		msg = strings.Replace(msg, "field ", c.what+" ", 1)
	}
	c.changes = append(c.changes, msg)
}

// message converts an object schema into flat fields.
func (c *converter) message(schema any, where string) (*catalog.Message, error) {
	obj, err := asObject(schema)
	if err != nil {
		return nil, fmt.Errorf("%s to be a JSON object schema", where)
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, fmt.Errorf("%s of type object, not %v", where, t)
	}
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf", "not", "if", "patternProperties"} {
		if _, ok := obj[k]; ok {
			return nil, fmt.Errorf("%s without %s at its top level", where, k)
		}
	}
	m := &catalog.Message{Fields: []*catalog.Field{}}
	if d, ok := obj["description"].(string); ok {
		m.Description = d
	}
	required := stringSet(obj["required"])
	props, _ := obj["properties"].(map[string]any)
	// A schema as the server wrote it keeps each property's too, for the
	// order of a record's fields.
	var rawProps map[string]json.RawMessage
	if raw, ok := schema.(json.RawMessage); ok {
		var top struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		json.Unmarshal(raw, &top)
		rawProps = top.Properties
	}
	for _, name := range propertyOrder(schema, props) {
		if !fieldKeyRE.MatchString(name) {
			return nil, fmt.Errorf("a field name a contract can spell: %q is neither snake_case nor lowerCamelCase", name)
		}
		f, err := c.field(name, props[name], rawProps[name], required[name], false)
		if err != nil {
			return nil, err
		}
		m.Fields = append(m.Fields, f)
	}
	return m, nil
}

// propertyOrder returns the properties in the order the server declared
// them: go-sdk decodes a schema into a map, so the order is read from
// the schema's JSON again. A schema that is not raw falls back to sorted
// names.
func propertyOrder(schema any, props map[string]any) []string {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	raw, err := json.Marshal(schema)
	if err != nil {
		return names
	}
	order := declaredOrder(raw)
	if len(order) != len(names) {
		return names
	}
	return order
}

// declaredOrder returns the keys of "properties" in a JSON object as they
// appear. json.Marshal of a map sorts them, so this only helps with raw
// schemas; it is here so that a raw schema's order survives.
func declaredOrder(raw []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	props, ok := top["properties"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(props)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := tok.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}

func asObject(v any) (map[string]any, error) {
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case json.RawMessage:
		var m map[string]any
		err := json.Unmarshal(v, &m)
		return m, err
	case nil:
		return nil, fmt.Errorf("no schema")
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		err = json.Unmarshal(data, &m)
		return m, err
	}
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	list, _ := v.([]any)
	for _, e := range list {
		if s, ok := e.(string); ok {
			out[s] = true
		}
	}
	return out
}

var scalarTypes = []string{"string", "integer", "number", "boolean"}

// schemaType returns a property's type, and whether it admits null.
func schemaType(p map[string]any) (typ string, nullable bool, err error) {
	switch t := p["type"].(type) {
	case string:
		return t, t == "null", nil
	case []any:
		var types []string
		for _, e := range t {
			s, _ := e.(string)
			if s == "null" {
				nullable = true
				continue
			}
			types = append(types, s)
		}
		if len(types) != 1 {
			return "", false, fmt.Errorf("one type, not %v", t)
		}
		return types[0], nullable, nil
	case nil:
		// anyOf: [{...}, {type: null}] is how several SDKs spell an
		// optional value.
		for _, k := range []string{"anyOf", "oneOf"} {
			alts, ok := p[k].([]any)
			if !ok {
				continue
			}
			var rest []map[string]any
			for _, a := range alts {
				m, _ := a.(map[string]any)
				if m["type"] == "null" {
					nullable = true
					continue
				}
				rest = append(rest, m)
			}
			if len(rest) == 1 && nullable {
				for k, v := range rest[0] {
					if _, set := p[k]; !set {
						p[k] = v
					}
				}
				delete(p, "anyOf")
				delete(p, "oneOf")
				typ, _, err := schemaType(p)
				return typ, true, err
			}
			return "", false, fmt.Errorf("a single type, not %s of %d alternatives", k, len(alts))
		}
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
			if _, ok := enum[0].(string); ok {
				return "string", false, nil
			}
		}
		if c, ok := p["const"].(string); ok && c != "" {
			return "string", false, nil
		}
		return "", false, fmt.Errorf("a type (a free-form value)")
	default:
		return "", false, fmt.Errorf("a type, not %v", t)
	}
}

// field converts one property. inRecord is set for the properties of a
// record's items.
func (c *converter) field(name string, schema any, raw json.RawMessage, required, inRecord bool) (*catalog.Field, error) {
	p, ok := schema.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("field %q to have a schema object", name)
	}
	p = clone(p)
	for _, k := range []string{"$ref", "allOf", "not", "if", "patternProperties"} {
		if _, ok := p[k]; ok {
			return nil, fmt.Errorf("field %q without %s", name, k)
		}
	}
	typ, nullable, err := schemaType(p)
	if err != nil {
		return nil, fmt.Errorf("field %q to have %v", name, err)
	}
	f := &catalog.Field{Name: name, Type: catalog.Type(typ), Required: required}
	if d, ok := p["description"].(string); ok && strings.TrimSpace(d) != "" {
		f.Description = d
	} else {
		f.Description = NoDescription
		c.changef("field %q has no description from the server; the contract says so", name)
	}
	if nullable && required {
		f.Required = false
		c.changef("field %q takes null, which toolc reads as absent: it is optional", name)
	}
	if _, ok := p["title"]; ok {
		c.changef("field %q has a title, which a contract field has not: it was dropped", name)
	}
	switch {
	case slices.Contains(scalarTypes, typ):
		if err := c.scalar(f, p); err != nil {
			return nil, err
		}
	case typ == "array":
		items, ok := p["items"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("field %q, an array, to say what its items are", name)
		}
		it, _, err := schemaType(clone(items))
		if err != nil {
			return nil, fmt.Errorf("items of field %q to have %v", name, err)
		}
		switch {
		case slices.Contains(scalarTypes, it):
			f.Items = catalog.Type(it)
			if e, ok := items["enum"].([]any); ok {
				if it != "string" && it != "integer" {
					c.changef("the items of field %q have an enum of %ss, which a contract cannot state: it was dropped", name, it)
				} else if f.Enum, err = values(catalog.Type(it), e); err != nil {
					return nil, fmt.Errorf("items of field %q: %v", name, err)
				}
			}
		case it == "object" && !inRecord:
			f.Items = catalog.Object
			sub := &converter{what: c.what}
			var itemSchema any = items
			var rawItems struct {
				Items json.RawMessage `json:"items"`
			}
			if json.Unmarshal(raw, &rawItems) == nil && len(rawItems.Items) > 0 {
				itemSchema = rawItems.Items
			}
			m, err := sub.message(itemSchema, fmt.Sprintf("items of field %q", name))
			if err != nil {
				return nil, fmt.Errorf("the items of field %q to be flat objects: %v", name, err)
			}
			for _, sf := range m.Fields {
				if sf.IsRecord() {
					return nil, fmt.Errorf("field %q to be a record one level deep", name)
				}
			}
			f.Fields = m.Fields
			c.changes = append(c.changes, sub.changes...)
		default:
			return nil, fmt.Errorf("field %q to be an array of scalars or of flat objects, not of %s", name, it)
		}
		f.MinItems, f.MaxItems = intKey(p, "minItems"), intKey(p, "maxItems")
		f.UniqueItems, _ = p["uniqueItems"].(bool)
		if d, ok := p["default"]; ok && d != nil {
			if f.IsRecord() {
				c.changef("field %q has a default of records, which was dropped", name)
			} else if list, ok := d.([]any); ok {
				if f.Default, err = values(f.Items, list); err != nil {
					return nil, fmt.Errorf("default of field %q: %v", name, err)
				}
			}
		}
	case typ == "object":
		return nil, fmt.Errorf("field %q to be flat, not an object", name)
	default:
		return nil, fmt.Errorf("field %q to have a type a contract knows, not %q", name, typ)
	}
	if f.Default != nil && f.Required {
		f.Default = nil
		c.changef("field %q is required and has a default, which a contract allows only on optional fields: the default was dropped", name)
	}
	return f, nil
}

func (c *converter) scalar(f *catalog.Field, p map[string]any) error {
	var err error
	if e, ok := p["enum"].([]any); ok {
		if f.Type != catalog.String && f.Type != catalog.Integer {
			c.changef("field %q has an enum of %ss, which a contract cannot state: it was dropped", f.Name, f.Type)
		} else if f.Enum, err = values(f.Type, e); err != nil {
			return fmt.Errorf("enum of field %q: %v", f.Name, err)
		}
	} else if cv, ok := p["const"]; ok && (f.Type == catalog.String || f.Type == catalog.Integer) {
		if f.Enum, err = values(f.Type, []any{cv}); err != nil {
			return fmt.Errorf("const of field %q: %v", f.Name, err)
		}
	}
	if d, ok := p["default"]; ok && d != nil {
		v, err := values(f.Type, []any{d})
		if err != nil {
			return fmt.Errorf("default of field %q: %v", f.Name, err)
		}
		f.Default = v[0]
	}
	switch f.Type {
	case catalog.String:
		f.MinLength, f.MaxLength = intKey(p, "minLength"), intKey(p, "maxLength")
		f.Pattern, _ = p["pattern"].(string)
		if fm, ok := p["format"].(string); ok {
			if slices.Contains(validate.Formats(), fm) {
				f.Format = fm
			} else {
				c.changef("field %q has format %q, which toolc does not know: it was dropped", f.Name, fm)
			}
		}
	case catalog.Integer, catalog.Number:
		f.Minimum, f.Maximum = floatKey(p, "minimum"), floatKey(p, "maximum")
		// Draft 4 spells an exclusive bound as a boolean beside it.
		if b, ok := p["exclusiveMinimum"].(bool); ok {
			if b {
				f.ExclusiveMinimum, f.Minimum = f.Minimum, nil
			}
		} else {
			f.ExclusiveMinimum = floatKey(p, "exclusiveMinimum")
		}
		if b, ok := p["exclusiveMaximum"].(bool); ok {
			if b {
				f.ExclusiveMaximum, f.Maximum = f.Maximum, nil
			}
		} else {
			f.ExclusiveMaximum = floatKey(p, "exclusiveMaximum")
		}
	}
	return nil
}

// values converts JSON values to the catalog's Go types for typ.
func values(typ catalog.Type, in []any) ([]any, error) {
	out := make([]any, 0, len(in))
	for _, v := range in {
		switch typ {
		case catalog.String:
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%v is not a string", v)
			}
			out = append(out, s)
		case catalog.Integer:
			n, ok := v.(float64)
			if !ok || n != math.Trunc(n) || math.Abs(n) > 1<<53 {
				return nil, fmt.Errorf("%v is not an integer", v)
			}
			out = append(out, int64(n))
		case catalog.Number:
			n, ok := v.(float64)
			if !ok {
				return nil, fmt.Errorf("%v is not a number", v)
			}
			out = append(out, n)
		case catalog.Boolean:
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("%v is not a boolean", v)
			}
			out = append(out, b)
		default:
			return nil, fmt.Errorf("values of type %s", typ)
		}
	}
	return out, nil
}

func intKey(p map[string]any, k string) *int64 {
	n, ok := p[k].(float64)
	if !ok || n < 0 || n != math.Trunc(n) || n > 1<<53 {
		return nil
	}
	v := int64(n)
	return &v
}

func floatKey(p map[string]any, k string) *float64 {
	n, ok := p[k].(float64)
	if !ok {
		return nil
	}
	return &n
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
