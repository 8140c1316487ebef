package validate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolc/toolc/catalog"
)

// This file holds what the validator tests, fuzz test and benchmarks share:
// representative requests, and the reference that they are held to, which
// is github.com/santhosh-tekuri/jsonschema/v6 on each request's MCP
// projection, with format assertions on.

func valInt(n int64) *int64                  { return &n }
func valFloat(x float64) *float64            { return &x }
func valOpt(f *catalog.Field) *catalog.Field { f.Required = false; return f }

func valField(name string, typ catalog.Type) *catalog.Field {
	return &catalog.Field{Name: name, Type: typ, Description: "The " + name, Required: true}
}

// valWeatherRequest is examples/weather's query_weather request: the typical
// flat request of the benchmarks.
func valWeatherRequest() *catalog.Message {
	city := valField("city", catalog.String)
	city.MinLength = valInt(1)
	days := valOpt(valField("days", catalog.Integer))
	days.Default, days.Minimum, days.Maximum = int64(3), valFloat(1), valFloat(14)
	unit := valOpt(valField("unit", catalog.String))
	unit.Enum, unit.Default = []any{"celsius", "fahrenheit"}, "celsius"
	hours := valOpt(valField("hours", catalog.Array))
	hours.Items, hours.MaxItems = catalog.Integer, valInt(24)
	return &catalog.Message{Description: "A forecast query", Fields: []*catalog.Field{city, days, unit, hours}}
}

// valStringsRequest has every string keyword: lengths, patterns, formats and
// a long enum.
func valStringsRequest() *catalog.Message {
	code := valField("code", catalog.String)
	code.Pattern = `^[A-Z]{3}-\d+$`
	name := valOpt(valField("name", catalog.String))
	name.MinLength, name.MaxLength, name.Default = valInt(2), valInt(5), "émile"
	search := valOpt(valField("search", catalog.String))
	search.Pattern = `ab+c|[α-ω]{2}`
	color := valOpt(valField("color", catalog.String))
	color.Enum = []any{"red", "orange", "yellow", "green", "blue", "indigo", "violet", "black", "white", "grey", "Ünïcode"}
	fs := []*catalog.Field{code, name, search, color}
	for _, f := range []string{"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"} {
		x := valOpt(valField("f_"+strings.ReplaceAll(f, "-", ""), catalog.String))
		x.Format = f
		fs = append(fs, x)
	}
	return &catalog.Message{Fields: fs}
}

// valNumbersRequest has every numeric keyword, inclusive and exclusive, with
// integral, fractional and large bounds, and integer enums.
func valNumbersRequest() *catalog.Message {
	n := valField("n", catalog.Integer)
	n.ExclusiveMinimum, n.ExclusiveMaximum = valFloat(0), valFloat(100)
	x := valOpt(valField("x", catalog.Number))
	x.Minimum, x.Maximum = valFloat(-1.5), valFloat(2.25)
	y := valOpt(valField("y", catalog.Number))
	y.ExclusiveMinimum, y.Default = valFloat(0.1), 0.5
	big := valOpt(valField("big", catalog.Integer))
	big.Minimum, big.Maximum = valFloat(-9007199254740993), valFloat(1e21)
	tiny := valOpt(valField("tiny", catalog.Number))
	tiny.ExclusiveMaximum, tiny.Minimum = valFloat(1e-7), valFloat(-1e-300)
	level := valOpt(valField("level", catalog.Integer))
	level.Enum, level.Default = []any{int64(1), int64(2), int64(3), int64(5), int64(8)}, int64(2)
	flag := valOpt(valField("flag", catalog.Boolean))
	flag.Default = true
	any := valOpt(valField("any", catalog.Number))
	return &catalog.Message{Fields: []*catalog.Field{n, x, y, big, tiny, level, flag, any}}
}

// valArraysRequest has arrays of every item type with counts and
// uniqueness, and enums on string and integer items.
func valArraysRequest() *catalog.Message {
	tags := valOpt(valField("tags", catalog.Array))
	tags.Items, tags.MinItems, tags.MaxItems, tags.UniqueItems = catalog.String, valInt(1), valInt(3), true
	tags.Default = []any{"none"}
	nums := valOpt(valField("nums", catalog.Array))
	nums.Items, nums.UniqueItems = catalog.Number, true
	ints := valField("ints", catalog.Array)
	ints.Items, ints.MinItems, ints.UniqueItems = catalog.Integer, valInt(2), true
	flags := valOpt(valField("flags", catalog.Array))
	flags.Items, flags.MaxItems, flags.UniqueItems = catalog.Boolean, valInt(2), true
	anyStrs := valOpt(valField("any", catalog.Array))
	anyStrs.Items = catalog.String
	// Multi-selects: an enum on the items.
	colors := valOpt(valField("colors", catalog.Array))
	colors.Items, colors.Enum, colors.UniqueItems = catalog.String, []any{"red", "green", "blue"}, true
	levels := valOpt(valField("levels", catalog.Array))
	levels.Items, levels.Enum, levels.Default = catalog.Integer, []any{int64(1), int64(2), int64(3)}, []any{int64(1)}
	return &catalog.Message{Fields: []*catalog.Field{tags, nums, ints, flags, anyStrs, colors, levels}}
}

// valRecordsRequest has records: one required with bounds on its count,
// whose items' fields have every kind of keyword and defaults, and one
// optional.
func valRecordsRequest() *catalog.Message {
	path := valField("path", catalog.String)
	oldText := valField("oldText", catalog.String)
	oldText.MinLength = valInt(1)
	newText := valField("newText", catalog.String)
	count := valOpt(valField("count", catalog.Integer))
	count.Default, count.Minimum, count.Maximum = int64(1), valFloat(1), valFloat(9)
	mode := valOpt(valField("mode", catalog.String))
	mode.Enum = []any{"exact", "regex"}
	lines := valOpt(valField("lines", catalog.Array))
	lines.Items, lines.UniqueItems, lines.MaxItems = catalog.Integer, true, valInt(3)
	ratio := valOpt(valField("ratio", catalog.Number))
	ratio.ExclusiveMinimum = valFloat(0)
	edits := valField("edits", catalog.Array)
	edits.Items, edits.MinItems, edits.MaxItems = catalog.Object, valInt(1), valInt(3)
	edits.Fields = []*catalog.Field{oldText, newText, count, mode, lines, ratio}
	text := valField("text", catalog.String)
	text.Pattern = `^[a-z ]+$`
	at := valOpt(valField("at", catalog.Integer))
	when := valOpt(valField("when", catalog.String))
	when.Format = "date"
	meta := valOpt(valField("meta", catalog.JSON))
	meta.Object = true
	notes := valOpt(valField("notes", catalog.Array))
	notes.Items, notes.Fields = catalog.Object, []*catalog.Field{text, at, when, meta}
	return &catalog.Message{Fields: []*catalog.Field{path, edits, notes}}
}

// valJSONRequest has free-form (JSON) fields: a required object, and an
// optional value of any kind.
func valJSONRequest() *catalog.Message {
	query := valField("query", catalog.JSON)
	query.Object = true
	patch := valOpt(valField("patch", catalog.JSON))
	note := valOpt(valField("note", catalog.String))
	return &catalog.Message{Fields: []*catalog.Field{query, patch, note}}
}

// refRequest is a request with its validator and its reference schema.
type refRequest struct {
	name string
	msg  *catalog.Message
	v    *Validator
	sch  *jsonschema.Schema
	// schema is the projected input schema, for messages.
	schema []byte
}

func refRequests(tb testing.TB) []*refRequest {
	tb.Helper()
	var out []*refRequest
	for _, r := range []struct {
		name string
		msg  *catalog.Message
	}{
		{"weather", valWeatherRequest()},
		{"strings", valStringsRequest()},
		{"numbers", valNumbersRequest()},
		{"arrays", valArraysRequest()},
		{"empty", &catalog.Message{}},
		{"records", valRecordsRequest()},
		{"json", valJSONRequest()},
	} {
		v, err := NewValidator(r.msg)
		if err != nil {
			tb.Fatalf("%s: %v", r.name, err)
		}
		schema, sch := compileReference(tb, r.msg)
		out = append(out, &refRequest{name: r.name, msg: r.msg, v: v, sch: sch, schema: schema})
	}
	return out
}

// compileReference projects the request into MCP and compiles its input
// schema with jsonschema/v6, format assertions on.
func compileReference(tb testing.TB, msg *catalog.Message) ([]byte, *jsonschema.Schema) {
	tb.Helper()
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "svc", Version: "1.0.0", Description: "d",
		Tools: []*catalog.Tool{{Name: "tool", Description: "d", Request: *msg}},
	}}}
	schema, err := json.Marshal(cat.MCPTools()[0].InputSchema)
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://request.json", doc); err != nil {
		tb.Fatal(err)
	}
	sch, err := c.Compile("mem://request.json")
	if err != nil {
		tb.Fatal(err)
	}
	return schema, sch
}

// refDecode decodes arguments the way the reference sees them: empty
// input and null are {}, as for the validator; otherwise jsonschema's own
// UnmarshalJSON (json.Decoder with UseNumber, nothing after the value).
func refDecode(args []byte) (any, error) {
	if len(refTrimSpace(args)) == 0 {
		return map[string]any{}, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]any{}, nil
	}
	return v, nil
}

// refTrimSpace trims JSON white space, which is less than bytes.TrimSpace trims.
func refTrimSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// refDuplicateKey reports a key given twice in the top-level object, which
// encoding/json lets through (the last one wins) and the validator rejects.
func refDuplicateKey(args []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key := tok.(string)
		if seen[key] {
			return key, true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// referenceVerdict is the reference's verdict on arguments: nil when they
// are valid. It reports panics of jsonschema/v6 as such.
func referenceVerdict(r *refRequest, args []byte) (verdict error, panicked any) {
	sch := r.sch
	v, err := refDecode(args)
	if err != nil {
		return err, nil
	}
	refDropNulls(r.msg, v)
	if err := refJSON(r.msg.Fields, v); err != nil {
		return err, nil
	}
	if key, dup := refDuplicateKey(args); dup {
		return fmt.Errorf("duplicate key %q", key), nil
	}
	if err := refRange(r.msg, v); err != nil {
		return err, nil
	}
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	return sch.Validate(v), nil
}

// refDropNulls removes the optional fields given as null from decoded
// arguments: the validator reads them as absent, because the strict
// projections advertise optional fields as [T, "null"], while the MCP
// projection, the reference's schema, leaves null out.
func refDropNulls(msg *catalog.Message, v any) {
	refDropNullsIn(msg.Fields, v)
}

// refDropNullsIn does it for the fields of an object, and of the objects
// in its record fields.
func refDropNullsIn(fields []*catalog.Field, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, f := range fields {
		x, given := m[f.Name]
		if given && x == nil && !f.Required {
			delete(m, f.Name)
		}
		if items, ok := x.([]any); ok && f.IsRecord() {
			for _, item := range items {
				refDropNullsIn(f.Fields, item)
			}
		}
	}
}

// refJSON adjusts the free-form (JSON) fields of decoded arguments, of an
// object or of the items of its records, where the validator
// deliberately parts from JSON Schema: a string that holds a JSON text
// (an object's, for an object field) stands for that value, as the strict
// projections send it, and the MCP projection's schema says the value's
// type; and a value nested deeper than MaxJSONDepth is refused. (The size
// bound, MaxJSONBytes, is beyond what the fuzzer writes.)
func refJSON(fields []*catalog.Field, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for _, f := range fields {
		x, given := m[f.Name]
		if !given {
			continue
		}
		if items, ok := x.([]any); ok && f.IsRecord() {
			for _, item := range items {
				if err := refJSON(f.Fields, item); err != nil {
					return err
				}
			}
			continue
		}
		if f.Type != catalog.JSON {
			continue
		}
		if s, ok := x.(string); ok {
			text := strings.Trim(s, " \t\r\n")
			if parsed, err := jsonschema.UnmarshalJSON(strings.NewReader(text)); err == nil && json.Valid([]byte(text)) {
				if _, isObj := parsed.(map[string]any); isObj || !f.Object {
					m[f.Name], x = parsed, parsed
				}
			}
		}
		if refDepth(x) > MaxJSONDepth {
			return fmt.Errorf("field %q is nested more than %d deep", f.Name, MaxJSONDepth)
		}
	}
	return nil
}

// refDepth is the nesting of arrays and objects in a decoded value.
func refDepth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			deepest = max(deepest, refDepth(x))
		}
		return deepest + 1
	case map[string]any:
		for _, x := range v {
			deepest = max(deepest, refDepth(x))
		}
		return deepest + 1
	}
	return 0
}

// refRange holds the numbers of arguments to the 64-bit types of their
// fields, where the validator deliberately parts from JSON Schema: an
// integer field holds an int64, the type of its generated Go field, and a
// number field a float64, as the handler's decoder reads them. It judges
// a number by its value, as JSON Schema does, and rewrites an integer in
// range as plain digits, which jsonschema/v6 then reads (math/big refuses
// 0e99999999999999999999, which is 0).
func refRange(msg *catalog.Message, v any) error {
	return refRangeIn(msg.Fields, v)
}

// refRangeIn does it for the fields of an object, and of the objects in
// its record fields.
func refRangeIn(fields []*catalog.Field, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	check := func(t catalog.Type, x any) (any, error) {
		n, ok := x.(json.Number)
		if !ok {
			return x, nil
		}
		switch t {
		case catalog.Integer:
			i, integral, fits := refInt64(string(n))
			switch {
			case integral && !fits:
				return nil, fmt.Errorf("%s is beyond int64", n)
			case integral:
				return json.Number(strconv.FormatInt(i, 10)), nil
			}
		case catalog.Number:
			if _, err := strconv.ParseFloat(string(n), 64); err != nil {
				return nil, fmt.Errorf("%s is beyond float64: %v", n, err)
			}
		}
		return x, nil
	}
	for _, f := range fields {
		x, ok := m[f.Name]
		if !ok {
			continue
		}
		var err error
		if arr, isArr := x.([]any); isArr && f.IsRecord() {
			for _, item := range arr {
				if err := refRangeIn(f.Fields, item); err != nil {
					return err
				}
			}
		} else if arr, isArr := x.([]any); isArr && f.Type == catalog.Array {
			for i := range arr {
				if arr[i], err = check(f.Items, arr[i]); err != nil {
					return err
				}
			}
		} else if m[f.Name], err = check(f.Type, x); err != nil {
			return err
		}
	}
	return nil
}

// refInt64 reads a JSON number's value exactly: whether it is integral,
// and whether an int64 holds it, whatever its spelling.
func refInt64(s string) (n int64, integral, fits bool) {
	p := refNumberRE.FindStringSubmatch(s)
	if p == nil {
		return 0, false, false
	}
	digits := strings.TrimLeft(p[2]+p[3], "0")
	if digits == "" {
		return 0, true, true
	}
	exp, ok := new(big.Int).SetString(cmp.Or(strings.TrimPrefix(p[4], "+"), "0"), 10)
	if !ok {
		return 0, false, false
	}
	exp.Sub(exp, big.NewInt(int64(len(p[3]))))
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))
	switch {
	case exp.Sign() < 0:
		return 0, false, false
	case exp.Cmp(big.NewInt(19)) > 0:
		return 0, true, false
	}
	x, _ := new(big.Int).SetString(trimmed+strings.Repeat("0", int(exp.Int64())), 10)
	if p[1] == "-" {
		x.Neg(x)
	}
	return x.Int64(), true, x.IsInt64()
}

var refNumberRE = regexp.MustCompile(`^(-?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$`)

// refUnparsableInArray reports a number that math/big cannot read (an exponent
// beyond ±1e6), inside an array: jsonschema/v6 then finds the number unequal
// to itself in uniqueItems, or panics.
func refUnparsableInArray(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, x := range m {
		arr, ok := x.([]any)
		if !ok {
			continue
		}
		for _, item := range arr {
			if n, ok := item.(json.Number); ok {
				if _, ok := new(big.Rat).SetString(string(n)); !ok {
					return true
				}
			}
			if refUnparsableInArray(item) { // an item of a record
				return true
			}
		}
	}
	return false
}

// refEqual compares two decoded JSON values as JSON Schema does: numbers
// by value.
func refEqual(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(b))
		return ok1 && ok2 && ra.Cmp(rb) == 0
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !refEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			if !refEqual(x, b[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// checkOutputFields checks the output of one object, the arguments or an
// item of a record: every given field with its value (each item of a
// record checked in turn), the default of every absent optional field
// that has one, and nothing else.
func checkOutputFields(t *testing.T, where string, fields []*catalog.Field, given, got map[string]any) {
	t.Helper()
	for _, f := range fields {
		x, inGiven := given[f.Name]
		y, inOut := got[f.Name]
		switch {
		case inGiven && !inOut:
			t.Errorf("%s lacks field %q", where, f.Name)
		case inGiven && f.IsRecord():
			xs, ys := x.([]any), y.([]any)
			if len(xs) != len(ys) {
				t.Errorf("%s changes the number of items of %q", where, f.Name)
				continue
			}
			for i := range xs {
				checkOutputFields(t, fmt.Sprintf("%s, item %d of %q,", where, i, f.Name), f.Fields, xs[i].(map[string]any), ys[i].(map[string]any))
			}
		case inGiven && !refEqual(x, y):
			t.Errorf("%s changes field %q from %v to %v", where, f.Name, x, y)
		case !inGiven && f.Default != nil:
			want, _ := json.Marshal(f.Default)
			var w any
			d := json.NewDecoder(bytes.NewReader(want))
			d.UseNumber()
			_ = d.Decode(&w)
			if !inOut || !refEqual(w, y) {
				t.Errorf("%s has field %q = %v, want the default %s", where, f.Name, y, want)
			}
		case !inGiven && inOut:
			t.Errorf("%s adds field %q without a default", where, f.Name)
		}
	}
	if len(got) > len(fields) {
		t.Errorf("%s has unknown fields", where)
	}
}

// checkValidOutput holds valid arguments' output to its promise: compact JSON
// that holds every given field with its value, the default of every absent
// optional field that has one, and nothing else; and that validates again,
// unchanged.
func checkValidOutput(t *testing.T, r *refRequest, args, out []byte) {
	t.Helper()
	in, err := refDecode(args)
	if err != nil {
		t.Fatalf("%s: valid arguments %q do not decode: %v", r.name, args, err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var got map[string]any
	if err := dec.Decode(&got); err != nil || dec.More() {
		t.Fatalf("%s: output %q of %q is not one JSON object: %v", r.name, out, args, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out); err != nil || !bytes.Equal(compact.Bytes(), out) {
		t.Errorf("%s: output %q of %q is not compact", r.name, out, args)
	}
	refDropNulls(r.msg, in)
	if err := refJSON(r.msg.Fields, in); err != nil {
		t.Fatalf("%s: valid arguments %q break the reference's JSON bounds: %v", r.name, args, err)
	}
	checkOutputFields(t, r.name+": output "+string(out)+" of "+string(args), r.msg.Fields, in.(map[string]any), got)
	again, err := r.v.Validate(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Errorf("%s: output %q of %q validates as %q, %v; want it unchanged", r.name, out, args, again, err)
	}
	if err := r.sch.Validate(any(got)); err != nil {
		t.Errorf("%s: output %q of %q is invalid to jsonschema: %v", r.name, out, args, err)
	}
}
