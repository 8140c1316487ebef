package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Schema is the JSON Schema of one field, or of an array's items (an
// object for a record field's), as a projection emits it. The struct's field order is the key order of the
// output, so projections read the same way every time.
type Schema struct {
	Type        TypeList `json:"type,omitempty"`
	Description string   `json:"description,omitempty"`
	Nullable    bool     `json:"nullable,omitempty"`
	// Properties, Required, AdditionalProperties and PropertyOrdering are
	// an object's: the items of a record field.
	Properties           Properties `json:"properties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	AdditionalProperties *bool      `json:"additionalProperties,omitempty"`
	PropertyOrdering     []string   `json:"propertyOrdering,omitempty"`
	Enum                 []any      `json:"enum,omitempty"`
	Default              any        `json:"default,omitempty"`
	Format               string     `json:"format,omitempty"`
	Pattern              string     `json:"pattern,omitempty"`
	MinLength            *int64     `json:"minLength,omitempty"`
	MaxLength            *int64     `json:"maxLength,omitempty"`
	Minimum              *float64   `json:"minimum,omitempty"`
	Maximum              *float64   `json:"maximum,omitempty"`
	ExclusiveMinimum     *float64   `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     *float64   `json:"exclusiveMaximum,omitempty"`
	Items                *Schema    `json:"items,omitempty"`
	MinItems             *int64     `json:"minItems,omitempty"`
	MaxItems             *int64     `json:"maxItems,omitempty"`
	UniqueItems          bool       `json:"uniqueItems,omitempty"`
	Examples             []any      `json:"examples,omitempty"`
	Example              any        `json:"example,omitempty"`
	// MCPHeader is MCP's x-mcp-header (SEP-2243); only the MCP dialect
	// sets it.
	MCPHeader string `json:"x-mcp-header,omitempty"`
}

// ObjectSchema is the schema of a request or response: a flat object.
type ObjectSchema struct {
	Type                 TypeList   `json:"type"`
	Description          string     `json:"description,omitempty"`
	Properties           Properties `json:"properties"`
	Required             []string   `json:"required,omitempty"`
	AdditionalProperties *bool      `json:"additionalProperties,omitempty"`
	// PropertyOrdering lists the properties in the contract's order, for
	// Gemini, whose Schema takes it ("Order of properties displayed or used
	// where order matters"): its properties are a map.
	PropertyOrdering []string `json:"propertyOrdering,omitempty"`

	// plan, when set, says that neither Properties nor Required was
	// filled in: the object is one of ProjectJSON's, whose fields the
	// writer writes straight from fields as plan plans them.
	plan   *dialect
	fields []*Field
}

// Properties are an object's properties in the order the contract
// declares them, which is the order a model reads them in, and in which
// OpenAI's strict mode generates them. In JSON they are an object.
type Properties []Property

// Property is one property of an object schema.
type Property struct {
	Name   string
	Schema *Schema
}

// Get returns the schema of the named property, or nil.
func (ps Properties) Get(name string) *Schema {
	for _, p := range ps {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

// MarshalJSON writes the properties as an object, in order.
func (ps Properties) MarshalJSON() ([]byte, error) {
	if ps == nil {
		return []byte("null"), nil
	}
	w := &writer{}
	w.open('{')
	for _, p := range ps {
		w.strKey(p.Name)
		w.schema(p.Schema)
	}
	w.close('}')
	return w.b, w.err
}

// UnmarshalJSON reads an object of properties, keeping their order.
func (ps *Properties) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*ps = nil
		return nil
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("properties must be an object, not %v", tok)
	}
	out := Properties{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		var s Schema
		if err := dec.Decode(&s); err != nil {
			return err
		}
		out = append(out, Property{Name: key.(string), Schema: &s})
	}
	*ps = out
	return nil
}

// TypeList is a JSON Schema type: one name, or several such as
// ["string", "null"].
type TypeList []string

// MarshalJSON writes a single type as a string and several as an array.
func (t TypeList) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// UnmarshalJSON reads a type as a string or an array of strings.
func (t *TypeList) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*t = TypeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

// dialect says how one target expresses a flat schema: which keywords it
// has, and how it marks optional fields. A keyword the target lacks moves
// into the description as "{key: value}", as Anthropic's SDK does in its
// transform_schema, so that the model still reads it.
type dialect struct {
	// has reports whether the target takes keyword key on field f.
	has func(key string, f *Field) bool
	// allRequired lists every field as required and marks optional ones by
	// allowing null instead (OpenAI strict).
	allRequired bool
	// nullable marks optional fields with "nullable": true (Gemini).
	nullable bool
	// ordered lists the properties in propertyOrdering (Gemini).
	ordered bool
	// closed sets "additionalProperties": false.
	closed bool
	// upperTypes writes types as Gemini's enum names, such as "STRING".
	upperTypes bool
	// singleExample uses OpenAPI's "example" instead of "examples".
	singleExample bool
	// maxDescription cuts tool descriptions longer than this many
	// characters. Field descriptions are never cut: no provider documents
	// a limit on them, and a cut would lose the constraints moved there.
	maxDescription int
	// mcpHeaders writes a field's MCPHeader as x-mcp-header (MCP). Other
	// targets drop it: it is for the transport, not for the model.
	mcpHeaders bool
	// jsonAsString projects a free-form (JSON) field as a string that
	// holds its JSON text, for a target that cannot state an open value:
	// the strict modes, which close every object, and Gemini, which
	// rejects an object without properties. The runtime parses it back.
	jsonAsString bool
}

// takes reports whether the dialect keeps keyword key on field f: a JSON
// field's examples, projected as a string, go into its description.
func (d dialect) takes(key string, f *Field) bool {
	if key == "examples" && f.Type == JSON && d.jsonAsString {
		return false
	}
	return d.has(key, f)
}

// projectedType is the type a dialect gives a field: its own, but for a
// JSON field a string that holds it (see jsonAsString), an object, or no
// type at all, which JSON Schema reads as any value.
func (d dialect) projectedType(f *Field) Type {
	switch {
	case f.Type != JSON:
		return f.Type
	case d.jsonAsString:
		return String
	case f.Object:
		return "object"
	}
	return ""
}

// typeList returns the type of a schema, with "null" added for a nullable
// one. The lists are shared and full (len == cap), so that an append makes
// a copy; a projection's schemas are for reading.
func (d dialect) typeList(t Type, null bool) TypeList {
	if t == "" {
		return nil // any value
	}
	if i := typeIndex(t); i >= 0 {
		return typeLists[i][b2i(d.upperTypes)][b2i(null)]
	}
	name := string(t)
	if d.upperTypes {
		name = strings.ToUpper(name)
	}
	if null {
		return TypeList{name, "null"}
	}
	return TypeList{name}
}

// schemaTypes are the types that typeLists holds, in its order.
var schemaTypes = [...]Type{String, Integer, Number, Boolean, Array, "object"}

// typeIndex returns t's index in schemaTypes, or -1: a switch, which is
// cheaper than hashing the name for every field of a projection.
func typeIndex(t Type) int {
	switch t {
	case String:
		return 0
	case Integer:
		return 1
	case Number:
		return 2
	case Boolean:
		return 3
	case Array:
		return 4
	case "object":
		return 5
	}
	return -1
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// typeLists holds the type lists of schemaTypes, by upper case and
// nullability.
var typeLists = func() (lists [len(schemaTypes)][2][2]TypeList) {
	for i, t := range schemaTypes {
		for upper := range 2 {
			name := string(t)
			if upper == 1 {
				name = strings.ToUpper(name)
			}
			l := TypeList{name, "null"}
			lists[i][upper][0] = l[:1:1]
			lists[i][upper][1] = l[:2:2]
		}
	}
	return lists
}()

// object builds the schema of a request or response.
func (d dialect) object(m *Message) *ObjectSchema {
	o := &ObjectSchema{}
	d.fill(o, m, nil)
	return o
}

// fill fills in o, the schema of m. With plan, as for ProjectJSON's reused
// objects, it stores d in *plan and leaves the fields' schemas and
// o.Required to the writer, which writes them straight from the fields
// (see plan): filling in schemas that are written once and then
// overwritten would cost more than writing them.
func (d dialect) fill(o *ObjectSchema, m *Message, plan *dialect) {
	o.Type = d.typeList("object", false)
	o.Description = m.Description
	o.plan, o.fields, o.Properties, o.Required, o.PropertyOrdering = nil, nil, nil, nil, nil
	if plan != nil {
		*plan = d
		o.plan, o.fields = plan, m.Fields
		d.close(o)
		return
	}
	// One allocation holds the schemas of every field, array item and
	// field of a record's items.
	schemas := make([]Schema, schemaCount(m.Fields))
	o.Properties, o.Required, o.PropertyOrdering = d.properties(m.Fields, &schemas)
	if o.Required == nil && d.allRequired {
		o.Required = []string{}
	}
	d.close(o)
}

// schemaCount is the number of schemas that fields project into: one per
// field, one per array's items, and those of a record's fields.
func schemaCount(fields []*Field) int {
	n := len(fields)
	for _, f := range fields {
		if f.Type == Array {
			n++
		}
		n += schemaCount(f.Fields)
	}
	return n
}

// next takes the next schema of a projection's allocation.
func next(slab *[]Schema) *Schema {
	s := &(*slab)[0]
	*slab = (*slab)[1:]
	return s
}

// properties builds the properties of an object whose properties are
// fields, and its required and propertyOrdering lists, as the dialect
// wants them; the schemas come from slab.
func (d dialect) properties(fields []*Field, slab *[]Schema) (props Properties, required, ordering []string) {
	props = make(Properties, 0, len(fields))
	for _, f := range fields {
		s := next(slab)
		d.field(f, s, slab)
		props = append(props, Property{f.Name, s})
		if d.ordered {
			ordering = append(ordering, f.Name)
		}
		if f.Required || d.allRequired {
			required = append(required, f.Name)
		}
	}
	return props, required, ordering
}

// close sets o's additionalProperties as the dialect wants it.
func (d dialect) close(o *ObjectSchema) {
	switch {
	case !d.closed:
		o.AdditionalProperties = nil
	case o.AdditionalProperties == nil:
		no := false
		o.AdditionalProperties = &no
	default:
		*o.AdditionalProperties = false // a reused object's
	}
}

// A fieldPlan is how a dialect projects one field: the type, the
// description with the keywords the target lacks moved into it, and the
// keywords it keeps. The typed projections fill in a Schema from it;
// ProjectJSON writes it straight from the field.
type fieldPlan struct {
	typ  TypeList
	desc string
	keep keywords
	// nullable marks an optional field "nullable" (Gemini); enumNull adds
	// null to an optional field's enum (OpenAI strict).
	nullable, enumNull bool
	// header is the field's x-mcp-header, in the MCP dialect.
	header string
}

// keywords is a set of a field's keywords, in the order of Schema's.
type keywords uint32

const (
	kwEnum keywords = 1 << iota
	kwDefault
	kwFormat
	kwPattern
	kwMinLength
	kwMaxLength
	kwMinimum
	kwMaximum
	kwExclusiveMinimum
	kwExclusiveMaximum
	kwMinItems
	kwMaxItems
	kwUniqueItems
	kwExamples
)

// plan plans f's schema. With scratch, a description that it has to build
// (moved keywords, a deprecation) is built in *scratch, and p.desc shares
// its bytes until the next plan with the same scratch: the writer writes
// it at once, and a projection of 2000 tools allocates no string for it.
func (d dialect) plan(f *Field, scratch *[]byte) fieldPlan {
	optional := !f.Required
	p := fieldPlan{typ: d.typeList(d.projectedType(f), optional && d.allRequired)}
	// moved lists the keywords that go into the description; keep says
	// whether the target takes a keyword, and otherwise moves it.
	var movedBuf [8]string
	moved := movedBuf[:0]
	keep := func(key string, k keywords, present bool) {
		switch {
		case !present:
		case d.takes(key, f):
			p.keep |= k
		default:
			moved = append(moved, key)
		}
	}
	keep("enum", kwEnum, len(f.Enum) > 0)
	keep("default", kwDefault, f.Default != nil)
	keep("format", kwFormat, f.Format != "")
	keep("pattern", kwPattern, f.Pattern != "")
	keep("minLength", kwMinLength, f.MinLength != nil)
	keep("maxLength", kwMaxLength, f.MaxLength != nil)
	keep("minimum", kwMinimum, f.Minimum != nil)
	keep("maximum", kwMaximum, f.Maximum != nil)
	keep("exclusiveMinimum", kwExclusiveMinimum, f.ExclusiveMinimum != nil)
	keep("exclusiveMaximum", kwExclusiveMaximum, f.ExclusiveMaximum != nil)
	keep("minItems", kwMinItems, f.MinItems != nil)
	keep("maxItems", kwMaxItems, f.MaxItems != nil)
	keep("uniqueItems", kwUniqueItems, f.UniqueItems)
	keep("examples", kwExamples, len(f.Examples) > 0)
	// An array's enum is its items'; null is the array's, not an item's.
	p.enumNull = optional && d.allRequired && p.keep&kwEnum != 0 && f.Type != Array
	p.nullable = optional && d.nullable
	if d.mcpHeaders {
		p.header = f.MCPHeader
	}
	p.desc = d.describe(f, moved, scratch)
	return p
}

// kept returns a bound if the plan keeps it, else nil.
func kept[T int64 | float64](p fieldPlan, k keywords, v *T) *T {
	if p.keep&k == 0 {
		return nil
	}
	return v
}

// field fills in s, the schema of f, taking the schemas of an array's
// items, and of a record's fields, from slab.
func (d dialect) field(f *Field, s *Schema, slab *[]Schema) {
	p := d.plan(f, nil)
	s.Type = p.typ
	s.Description = p.desc
	s.Nullable = p.nullable
	if p.keep&kwEnum != 0 && f.Type != Array {
		s.Enum = make([]any, len(f.Enum), len(f.Enum)+1)
		copy(s.Enum, f.Enum)
		if p.enumNull {
			s.Enum = append(s.Enum, nil)
		}
	}
	if p.keep&kwDefault != 0 {
		s.Default = f.Default
	}
	if p.keep&kwFormat != 0 {
		s.Format = f.Format
	}
	if p.keep&kwPattern != 0 {
		s.Pattern = f.Pattern
	}
	s.MinLength = kept(p, kwMinLength, f.MinLength)
	s.MaxLength = kept(p, kwMaxLength, f.MaxLength)
	s.Minimum = kept(p, kwMinimum, f.Minimum)
	s.Maximum = kept(p, kwMaximum, f.Maximum)
	s.ExclusiveMinimum = kept(p, kwExclusiveMinimum, f.ExclusiveMinimum)
	s.ExclusiveMaximum = kept(p, kwExclusiveMaximum, f.ExclusiveMaximum)
	if f.Type == Array {
		s.Items = next(slab)
		s.Items.Type = d.typeList(f.Items, false)
		if p.keep&kwEnum != 0 {
			s.Items.Enum = append([]any(nil), f.Enum...)
		}
		if f.IsRecord() {
			// A record's items are a closed object, in the dialect of the
			// request around them: strict mode's nullables, Gemini's.
			it := s.Items
			it.Properties, it.Required, it.PropertyOrdering = d.properties(f.Fields, slab)
			if d.closed {
				no := false
				it.AdditionalProperties = &no
			}
		}
	}
	s.MinItems = kept(p, kwMinItems, f.MinItems)
	s.MaxItems = kept(p, kwMaxItems, f.MaxItems)
	if p.keep&kwUniqueItems != 0 {
		s.UniqueItems = true
	}
	if p.keep&kwExamples != 0 {
		if d.singleExample {
			s.Example = f.Examples[0]
		} else {
			s.Examples = append([]any(nil), f.Examples...)
		}
	}
	s.MCPHeader = p.header
}

// describe appends the keywords a target lacks to a description, in the
// form Anthropic's SDK uses: "{minimum: 1, maximum: 14}".
func (d dialect) describe(f *Field, moved []string, scratch *[]byte) string {
	mark := f.Deprecated && !saysDeprecated(f.Description)
	note := ""
	if f.Type == JSON && d.jsonAsString {
		note = jsonAsStringNote
		if f.Object {
			note = jsonObjectAsStringNote
		}
	}
	if !mark && len(moved) == 0 && note == "" {
		return f.Description
	}
	var w writer
	if scratch != nil {
		w.b = (*scratch)[:0]
	} else {
		w.b = make([]byte, 0, len(deprecatedMark)+len(f.Description)+len(note)+2+32*len(moved))
	}
	if mark {
		w.b = append(w.b, deprecatedMark...)
	}
	w.b = append(w.b, f.Description...)
	if note != "" {
		w.b = append(w.b, "\n\n"...)
		w.b = append(w.b, note...)
	}
	if len(moved) > 0 {
		// The values are written as compact JSON without HTML escaping, so
		// that a pattern such as "<[a-z]+>" reads as written.
		w.b = append(w.b, "\n\n{"...)
		for i, key := range moved {
			if i > 0 {
				w.b = append(w.b, ", "...)
			}
			w.b = append(w.b, key...)
			w.b = append(w.b, ": "...)
			w.keyword(f, key)
		}
		w.b = append(w.b, '}')
	}
	if scratch != nil {
		*scratch = w.b
	}
	// Without scratch, nothing else holds w.b: the string can own it, as
	// a strings.Builder's does.
	return unsafe.String(unsafe.SliceData(w.b), len(w.b))
}

// keyword writes the value of one of f's keywords.
func (w *writer) keyword(f *Field, key string) {
	switch key {
	case "enum":
		w.list(f.Enum)
	case "default":
		w.value(f.Default)
	case "format":
		w.str(f.Format)
	case "pattern":
		w.str(f.Pattern)
	case "minLength":
		w.int(*f.MinLength)
	case "maxLength":
		w.int(*f.MaxLength)
	case "minimum":
		w.float(*f.Minimum)
	case "maximum":
		w.float(*f.Maximum)
	case "exclusiveMinimum":
		w.float(*f.ExclusiveMinimum)
	case "exclusiveMaximum":
		w.float(*f.ExclusiveMaximum)
	case "minItems":
		w.int(*f.MinItems)
	case "maxItems":
		w.int(*f.MaxItems)
	case "uniqueItems":
		w.bool(f.UniqueItems)
	case "examples":
		w.list(f.Examples)
	}
}

func (d dialect) cut(s string) string {
	if d.maxDescription <= 0 || len(s) <= d.maxDescription || utf8.RuneCountInString(s) <= d.maxDescription {
		return s
	}
	r := []rune(s)
	return string(r[:d.maxDescription-1]) + "…"
}

func all(string, *Field) bool { return true }

// The note that a JSON field projected as a string adds to its
// description, for the model.
const (
	jsonAsStringNote       = "A JSON value, sent as a string that holds its JSON text."
	jsonObjectAsStringNote = "A JSON object, sent as a string that holds its JSON text, such as \"{\\\"key\\\": 1}\"."
)
