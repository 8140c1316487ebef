package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// Schema is the JSON Schema of one field, or of an array's items, as a
// projection emits it. The struct's field order is the key order of the
// output, so projections read the same way every time.
type Schema struct {
	Type             TypeList `json:"type,omitempty"`
	Description      string   `json:"description,omitempty"`
	Nullable         bool     `json:"nullable,omitempty"`
	Enum             []any    `json:"enum,omitempty"`
	Default          any      `json:"default,omitempty"`
	Format           string   `json:"format,omitempty"`
	Pattern          string   `json:"pattern,omitempty"`
	MinLength        *int64   `json:"minLength,omitempty"`
	MaxLength        *int64   `json:"maxLength,omitempty"`
	Minimum          *float64 `json:"minimum,omitempty"`
	Maximum          *float64 `json:"maximum,omitempty"`
	ExclusiveMinimum *float64 `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum *float64 `json:"exclusiveMaximum,omitempty"`
	Items            *Schema  `json:"items,omitempty"`
	MinItems         *int64   `json:"minItems,omitempty"`
	MaxItems         *int64   `json:"maxItems,omitempty"`
	UniqueItems      bool     `json:"uniqueItems,omitempty"`
	Examples         []any    `json:"examples,omitempty"`
	Example          any      `json:"example,omitempty"`
}

// ObjectSchema is the schema of a request or response: a flat object.
type ObjectSchema struct {
	Type                 TypeList           `json:"type"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`

	// fields and slab hold Properties in name order, as the object was
	// built: field i's schema is the next one in slab, followed by its
	// items' schema for an array. ProjectJSON writes them from here,
	// without a map or a sort.
	fields []*Field
	slab   []Schema
	// scratch says that Properties was not built: the object is one of
	// ProjectJSON's, written from fields and slab and then reused.
	scratch bool
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
	// closed sets "additionalProperties": false.
	closed bool
	// upperTypes writes types as Gemini's enum names, such as "STRING".
	upperTypes bool
	// singleExample uses OpenAPI's "example" instead of "examples".
	singleExample bool
	// maxDescription cuts descriptions longer than this many characters.
	maxDescription int
}

// typeList returns the type of a schema, with "null" added for a nullable
// one. The lists are shared and full (len == cap), so that an append makes
// a copy; a projection's schemas are for reading.
func (d dialect) typeList(t Type, null bool) TypeList {
	if l, ok := typeLists[typeKey{t, d.upperTypes, null}]; ok {
		return l
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

type typeKey struct {
	t           Type
	upper, null bool
}

var typeLists = func() map[typeKey]TypeList {
	m := map[typeKey]TypeList{}
	for _, t := range []Type{String, Integer, Number, Boolean, Array, "object"} {
		for _, upper := range []bool{false, true} {
			name := string(t)
			if upper {
				name = strings.ToUpper(name)
			}
			l := TypeList{name, "null"}
			m[typeKey{t, upper, false}] = l[:1:1]
			m[typeKey{t, upper, true}] = l[:2:2]
		}
	}
	return m
}()

// object builds the schema of a request or response.
func (d dialect) object(m *Message) *ObjectSchema {
	o := &ObjectSchema{Properties: make(map[string]*Schema, len(m.Fields))}
	d.fill(o, m, nil)
	return o
}

// fill fills in o, the schema of m, with field schemas from slab, which it
// grows as needed and returns for reuse. It adds the fields to
// o.Properties unless that is nil, as in ProjectJSON's scratch objects,
// which the writer writes from o.fields and o.slab alone.
func (d dialect) fill(o *ObjectSchema, m *Message, slab []Schema) []Schema {
	o.Type = d.typeList("object", false)
	o.Description = m.Description
	sorted := slices.IsSortedFunc(m.Fields, func(a, b *Field) int { return strings.Compare(a.Name, b.Name) })
	o.scratch = o.Properties == nil && sorted
	if o.Properties == nil && !sorted {
		// The writer writes from o.fields only in name order.
		o.Properties = make(map[string]*Schema, len(m.Fields))
	}
	// One allocation holds the schemas of every field and array item.
	n := len(m.Fields)
	for _, f := range m.Fields {
		if f.Type == Array {
			n++
		}
	}
	if cap(slab) >= n {
		slab = slab[:n]
		clear(slab)
	} else {
		slab = make([]Schema, n)
	}
	o.slab = slab
	required := 0
	for _, f := range m.Fields {
		if f.Required || d.allRequired {
			required++
		}
	}
	o.Required = o.Required[:0]
	if required > 0 && cap(o.Required) < required {
		o.Required = make([]string, 0, required)
	}
	schemas := slab
	for _, f := range m.Fields {
		s := &schemas[0]
		schemas = schemas[1:]
		if f.Type == Array {
			s.Items = &schemas[0]
			schemas = schemas[1:]
		}
		d.field(f, s)
		if o.Properties != nil {
			o.Properties[f.Name] = s
		}
		if f.Required || d.allRequired {
			o.Required = append(o.Required, f.Name)
		}
	}
	o.fields = m.Fields
	if o.Properties != nil && (len(o.Properties) != len(m.Fields) || !sorted) {
		o.fields, o.slab = nil, nil // the writer sorts the map's keys
	}
	if len(o.Required) == 0 {
		o.Required = nil
		if d.allRequired {
			o.Required = []string{}
		}
	}
	switch {
	case !d.closed:
		o.AdditionalProperties = nil
	case o.AdditionalProperties == nil:
		no := false
		o.AdditionalProperties = &no
	default:
		*o.AdditionalProperties = false // a scratch object's, reused
	}
	return slab
}

// field fills in s, the schema of f; s.Items, when f is an array, points
// at the zero schema to fill in for its items.
func (d dialect) field(f *Field, s *Schema) {
	optional := !f.Required
	s.Type = d.typeList(f.Type, optional && d.allRequired)
	// moved lists the keywords that go into the description; keep says
	// whether the target takes a keyword, and otherwise moves it.
	var movedBuf [8]string
	moved := movedBuf[:0]
	keep := func(key string) bool {
		if d.has(key, f) {
			return true
		}
		moved = append(moved, key)
		return false
	}
	if len(f.Enum) > 0 && keep("enum") {
		s.Enum = make([]any, len(f.Enum), len(f.Enum)+1)
		copy(s.Enum, f.Enum)
	}
	if f.Default != nil && keep("default") {
		s.Default = f.Default
	}
	if f.Format != "" && keep("format") {
		s.Format = f.Format
	}
	if f.Pattern != "" && keep("pattern") {
		s.Pattern = f.Pattern
	}
	if f.MinLength != nil && keep("minLength") {
		s.MinLength = f.MinLength
	}
	if f.MaxLength != nil && keep("maxLength") {
		s.MaxLength = f.MaxLength
	}
	if f.Minimum != nil && keep("minimum") {
		s.Minimum = f.Minimum
	}
	if f.Maximum != nil && keep("maximum") {
		s.Maximum = f.Maximum
	}
	if f.ExclusiveMinimum != nil && keep("exclusiveMinimum") {
		s.ExclusiveMinimum = f.ExclusiveMinimum
	}
	if f.ExclusiveMaximum != nil && keep("exclusiveMaximum") {
		s.ExclusiveMaximum = f.ExclusiveMaximum
	}
	if f.Type == Array {
		s.Items.Type = d.typeList(f.Items, false)
	}
	if f.MinItems != nil && keep("minItems") {
		s.MinItems = f.MinItems
	}
	if f.MaxItems != nil && keep("maxItems") {
		s.MaxItems = f.MaxItems
	}
	if f.UniqueItems && keep("uniqueItems") {
		s.UniqueItems = true
	}
	if len(f.Examples) > 0 && keep("examples") {
		if d.singleExample {
			s.Example = f.Examples[0]
		} else {
			s.Examples = append([]any(nil), f.Examples...)
		}
	}
	if optional && d.allRequired && s.Enum != nil {
		s.Enum = append(s.Enum, nil)
	}
	if optional && d.nullable {
		s.Nullable = true
	}
	desc := f.Description
	if f.Deprecated {
		desc = markDeprecated(desc)
	}
	s.Description = d.describe(desc, f, moved)
}

// describe appends the keywords a target lacks to a description, in the
// form Anthropic's SDK uses: "{minimum: 1, maximum: 14}".
func (d dialect) describe(desc string, f *Field, moved []string) string {
	if len(moved) > 0 {
		// The values are written as compact JSON without HTML escaping, so
		// that a pattern such as "<[a-z]+>" reads as written.
		w := writer{b: make([]byte, 0, len(desc)+32*len(moved))}
		w.b = append(w.b, desc...)
		w.b = append(w.b, "\n\n{"...)
		for i, key := range moved {
			if i > 0 {
				w.b = append(w.b, ", "...)
			}
			w.b = append(w.b, key...)
			w.b = append(w.b, ": "...)
			w.value(f.keyword(key))
		}
		w.b = append(w.b, '}')
		desc = string(w.b)
	}
	return d.cut(desc)
}

// keyword returns the value of one of f's keywords.
func (f *Field) keyword(key string) any {
	switch key {
	case "enum":
		return f.Enum
	case "default":
		return f.Default
	case "format":
		return f.Format
	case "pattern":
		return f.Pattern
	case "minLength":
		return *f.MinLength
	case "maxLength":
		return *f.MaxLength
	case "minimum":
		return *f.Minimum
	case "maximum":
		return *f.Maximum
	case "exclusiveMinimum":
		return *f.ExclusiveMinimum
	case "exclusiveMaximum":
		return *f.ExclusiveMaximum
	case "minItems":
		return *f.MinItems
	case "maxItems":
		return *f.MaxItems
	case "uniqueItems":
		return f.UniqueItems
	case "examples":
		return f.Examples
	}
	return nil
}

func (d dialect) cut(s string) string {
	if d.maxDescription <= 0 || len(s) <= d.maxDescription || utf8.RuneCountInString(s) <= d.maxDescription {
		return s
	}
	r := []rune(s)
	return string(r[:d.maxDescription-1]) + "…"
}

func all(string, *Field) bool { return true }
