package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/validate"
)

// jsonSchemaTargets are the targets whose schemas are JSON Schema 2020-12.
// Gemini's are an OpenAPI 3.0 subset, which TestGeminiRules checks.
var jsonSchemaTargets = []catalog.Target{catalog.OpenAIChat, catalog.OpenAIResponses, catalog.Anthropic, catalog.Bedrock, catalog.MCP}

// projected is one tool's schemas in one projection.
type projected struct {
	service *catalog.Service
	tool    *catalog.Tool
	// input and output are the decoded schemas; output only for MCP.
	input, output map[string]any
	// strict is what the projection says: the provider enforces the schema
	// exactly, and some keywords may have moved into descriptions.
	strict bool
}

// projectTools projects cat and pairs each element with its catalog tool.
func projectTools(t *testing.T, cat *catalog.Catalog, target catalog.Target, opts catalog.ProjectOptions) []projected {
	t.Helper()
	data, err := cat.ProjectJSON(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var elems []any
	if target == catalog.Gemini {
		elems = obj(t, v.([]any)[0])["functionDeclarations"].([]any)
	} else {
		elems = v.([]any)
	}
	type ref struct {
		s *catalog.Service
		t *catalog.Tool
	}
	var tools []ref
	for s, tl := range cat.Tools() {
		tools = append(tools, ref{s, tl})
	}
	if target == catalog.MCP {
		// tools/list's order, which go-sdk's server sorts by name.
		slices.SortStableFunc(tools, func(a, b ref) int {
			return strings.Compare(a.t.ExposedMCPName(a.s.Name), b.t.ExposedMCPName(b.s.Name))
		})
	}
	if len(elems) != len(tools) {
		t.Fatalf("%s projects %d tools, the catalog has %d", target, len(elems), len(tools))
	}
	out := make([]projected, len(elems))
	for i, e := range elems {
		m := obj(t, e)
		p := projected{service: tools[i].s, tool: tools[i].t}
		var name any
		switch target {
		case catalog.OpenAIChat:
			fn := obj(t, m["function"])
			name, p.input, p.strict = fn["name"], obj(t, fn["parameters"]), fn["strict"] == true
		case catalog.OpenAIResponses:
			name, p.input, p.strict = m["name"], obj(t, m["parameters"]), m["strict"] == true
		case catalog.Anthropic:
			name, p.input, p.strict = m["name"], obj(t, m["input_schema"]), m["strict"] == true
		case catalog.Gemini:
			name = m["name"]
			if m["parameters"] != nil {
				p.input = obj(t, m["parameters"])
			}
		case catalog.Bedrock:
			spec := obj(t, m["toolSpec"])
			name, p.input, p.strict = spec["name"], obj(t, obj(t, spec["inputSchema"])["json"]), spec["strict"] == true
		case catalog.MCP:
			name, p.input = m["name"], obj(t, m["inputSchema"])
			if m["outputSchema"] != nil {
				p.output = obj(t, m["outputSchema"])
			}
		}
		want := p.tool.Name
		if target == catalog.MCP {
			want = p.tool.ExposedMCPName(p.service.Name)
		}
		if name != want {
			t.Fatalf("%s element %d is named %v, want %q (catalog order)", target, i, name, want)
		}
		out[i] = p
	}
	return out
}

func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	return m
}

// compileSchema validates doc against the JSON Schema 2020-12 meta-schema
// and compiles it, with format assertions on, as toolc's validator has
// them.
func compileSchema(t *testing.T, url string, doc map[string]any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	meta, err := c.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := meta.Validate(any(doc)); err != nil {
		t.Fatalf("%s does not validate against the 2020-12 meta-schema: %v", url, err)
	}
	if err := c.AddResource(url, any(doc)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s does not compile: %v", url, err)
	}
	return sch
}

// TestMetaSchema compiles every projected input schema, and every MCP
// output schema, of every example in both modes against the 2020-12
// meta-schema.
func TestMetaSchema(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range jsonSchemaTargets {
			for _, m := range modes {
				t.Run(ex.name+"/"+string(target)+m.suffix, func(t *testing.T) {
					n := 0
					for _, p := range projectTools(t, ex.cat, target, m.opts) {
						compileSchema(t, "https://toolc.test/"+p.tool.Name+"/input.json", p.input)
						n++
						if p.output != nil {
							compileSchema(t, "https://toolc.test/"+p.tool.Name+"/output.json", p.output)
							n++
						}
					}
					if n == 0 {
						t.Fatal("no schemas")
					}
				})
			}
		}
	}
}

// TestMetaSchemaRejects makes sure that the meta-schema check can fail:
// Gemini's upper-case types are not JSON Schema.
func TestMetaSchemaRejects(t *testing.T) {
	c := jsonschema.NewCompiler()
	meta := c.MustCompile("https://json-schema.org/draft/2020-12/schema")
	for _, doc := range []string{
		`{"type": "OBJECT"}`,
		`{"type": "object", "required": "city"}`,
		`{"type": "object", "properties": {"n": {"type": "integer", "minimum": "1"}}}`,
		`{"type": "string", "minLength": -1}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if meta.Validate(v) == nil {
			t.Errorf("the meta-schema accepts %s", doc)
		}
	}
}

// A sample is one set of arguments with the verdict it must get.
type sample struct {
	name  string
	args  map[string]any
	valid bool
	// bound marks a sample that breaks only a bound or pattern, which a
	// strict projection may move into the description.
	bound bool
	// nullField names the optional field that a sample sets to null: valid
	// exactly where optional fields admit null (OpenAI strict).
	nullField string
	// open marks a sample that breaks only the type of a free-form (json)
	// field, which a projection that takes the field as a string cannot
	// state: there the model sends the string that holds it.
	open bool
}

// samples returns the tool's contract examples (valid), one argument set
// with every field (valid), and mutations of a valid base that each break
// one rule (invalid): a wrong type, a missing required field, an unknown
// field, a value out of bounds, a value not in the enum.
func samples(t *testing.T, tool *catalog.Tool) []sample {
	t.Helper()
	req := &tool.Request
	var out []sample
	for i, ex := range tool.Examples {
		out = append(out, sample{name: fmt.Sprintf("example %d", i+1), args: ex, valid: true})
	}
	full := map[string]any{}
	minimal := map[string]any{}
	for _, f := range req.Fields {
		v, ok := validValue(f)
		if !ok {
			t.Fatalf("tool %s field %s: cannot make up a valid value; extend validValue", tool.Name, f.Name)
		}
		full[f.Name] = v
		if f.Required {
			minimal[f.Name] = v
		}
	}
	out = append(out, sample{name: "every field", args: full, valid: true}, sample{name: "required fields", args: minimal, valid: true})
	base := minimal
	if len(tool.Examples) > 0 {
		base = tool.Examples[0]
	}
	with := func(name string, v any) map[string]any {
		m := copyArgs(base)
		m[name] = v
		return m
	}
	bad := func(name string, args map[string]any, bound bool) {
		out = append(out, sample{name: name, args: args, bound: bound})
	}
	bad("unknown field", with("zz_not_a_field", "x"), false)
	for _, f := range req.Fields {
		p := f.Name + ": "
		if f.Required {
			m := copyArgs(base)
			delete(m, f.Name)
			bad(p+"missing", m, false)
		}
		anyValue := f.Type == catalog.JSON && !f.Object // null and "7" are values of it
		out = append(out, sample{name: p + "null", args: with(f.Name, nil), nullField: cond(!f.Required, f.Name, ""), valid: anyValue && f.Required, open: anyValue})
		if !anyValue {
			out = append(out, sample{name: p + "wrong type", args: with(f.Name, wrongValue(f.Type)), open: f.Type == catalog.JSON})
		}
		if f.Type == catalog.Integer {
			bad(p+"fraction", with(f.Name, 1.5), false)
		}
		if f.Type == catalog.Array {
			bad(p+"wrong item type", with(f.Name, []any{wrongValue(f.Items)}), false)
		}
		if f.IsRecord() {
			// An item of a record that breaks one of its rules.
			item, ok := validObject(f.Fields)
			if !ok {
				t.Fatalf("tool %s field %s: cannot make up a valid item; extend validValue", tool.Name, f.Name)
			}
			withItem := func(name string, v any) map[string]any {
				m := copyArgs(item)
				m[name] = v
				return with(f.Name, []any{m})
			}
			bad(p+"record item with an unknown field", withItem("zz_not_a_field", true), false)
			for _, sub := range f.Fields {
				if sub.Required {
					m := copyArgs(item)
					delete(m, sub.Name)
					bad(p+"record item missing a field", with(f.Name, []any{m}), false)
				}
				bad(p+"record item field of the wrong type", withItem(sub.Name, wrongValue(sub.Type)), false)
			}
		}
		if len(f.Enum) > 0 {
			var v any = "zz-not-in-enum"
			if f.Type == catalog.Integer {
				hi := int64(0)
				for _, e := range f.Enum {
					hi = max(hi, e.(int64))
				}
				v = hi + 1
			}
			bad(p+"not in enum", with(f.Name, v), false)
		}
		num := func(x float64) any {
			if f.Type == catalog.Integer {
				return int64(x)
			}
			return x
		}
		if f.Minimum != nil {
			bad(p+"below minimum", with(f.Name, num(math.Floor(*f.Minimum)-1)), true)
		}
		if f.Maximum != nil {
			bad(p+"above maximum", with(f.Name, num(math.Ceil(*f.Maximum)+1)), true)
		}
		if f.ExclusiveMinimum != nil {
			bad(p+"at exclusive minimum", with(f.Name, num(*f.ExclusiveMinimum)), true)
		}
		if f.ExclusiveMaximum != nil {
			bad(p+"at exclusive maximum", with(f.Name, num(*f.ExclusiveMaximum)), true)
		}
		if f.MinLength != nil && *f.MinLength > 0 {
			bad(p+"too short", with(f.Name, strings.Repeat("a", int(*f.MinLength-1))), true)
		}
		if f.MaxLength != nil {
			bad(p+"too long", with(f.Name, strings.Repeat("a", int(*f.MaxLength+1))), true)
		}
		if f.Pattern != "" {
			if v, ok := nonMatching(f); ok {
				bad(p+"pattern", with(f.Name, v), true)
			}
		}
		if f.Type == catalog.Array {
			if f.MinItems != nil && *f.MinItems > 0 {
				bad(p+"too few items", with(f.Name, distinctItemsOf(f, int(*f.MinItems-1))), true)
			}
			if f.MaxItems != nil {
				bad(p+"too many items", with(f.Name, distinctItemsOf(f, int(*f.MaxItems+1))), true)
			}
			if f.UniqueItems && (f.MaxItems == nil || *f.MaxItems >= 2) {
				item := distinctItems(f.Items, 1)[0]
				bad(p+"duplicate items", with(f.Name, []any{item, item}), true)
			}
		}
	}
	return out
}

// jsonAsStrings writes the value of every free-form (json) field, of the
// arguments or of a record's item, as a string that holds its JSON text,
// as a model sends it to a strict projection. null stays null, an
// optional field left out.
func jsonAsStrings(fields []*catalog.Field, args map[string]any) map[string]any {
	out := copyArgs(args)
	for _, f := range fields {
		x, ok := out[f.Name]
		switch {
		case !ok || x == nil:
		case f.Type == catalog.JSON:
			data, _ := json.Marshal(x)
			out[f.Name] = string(data)
		case f.IsRecord():
			items, isList := x.([]any)
			if !isList {
				continue
			}
			with := make([]any, len(items))
			for i, item := range items {
				with[i] = item
				if m, isObj := item.(map[string]any); isObj {
					with[i] = jsonAsStrings(f.Fields, m)
				}
			}
			out[f.Name] = with
		}
	}
	return out
}

// withNulls adds null for every optional field that args leaves out, and
// that an item of a record leaves out, as a model in OpenAI's strict mode
// sends them.
func withNulls(fields []*catalog.Field, args map[string]any) map[string]any {
	out := copyArgs(args)
	for _, f := range fields {
		x, ok := out[f.Name]
		if !ok && !f.Required {
			out[f.Name] = nil
		}
		if items, isList := x.([]any); isList && f.IsRecord() {
			with := make([]any, len(items))
			for i, item := range items {
				with[i] = item
				if m, isObj := item.(map[string]any); isObj {
					with[i] = withNulls(f.Fields, m)
				}
			}
			out[f.Name] = with
		}
	}
	return out
}

func cond[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

func copyArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func wrongValue(t catalog.Type) any {
	switch t {
	case catalog.String:
		return int64(7)
	case catalog.Integer, catalog.Number:
		return "7"
	case catalog.Boolean:
		return "true"
	}
	return "x"
}

// formatSamples are valid values of each string format.
var formatSamples = map[string]string{
	"date-time": "2025-01-31T09:00:00Z",
	"date":      "2025-01-31",
	"time":      "09:00:00Z",
	"duration":  "P1D",
	"email":     "mona@example.com",
	"hostname":  "example.com",
	"ipv4":      "192.0.2.1",
	"ipv6":      "2001:db8::1",
	"uuid":      "0b8e5f3c-6a1d-4a53-9a55-2f8f1d1e7c11",
	"uri":       "https://example.com/a",
}

// validValue makes up a value that fits f: its default, its first enum
// value or example, or one built from its bounds.
func validValue(f *catalog.Field) (any, bool) {
	var candidates []any
	if f.Default != nil {
		candidates = append(candidates, f.Default)
	}
	candidates = append(candidates, f.Enum...)
	candidates = append(candidates, f.Examples...)
	switch f.Type {
	case catalog.String:
		n := 3
		if f.MinLength != nil {
			n = max(n, int(*f.MinLength))
		}
		if f.MaxLength != nil {
			n = min(n, int(*f.MaxLength))
		}
		if s, ok := formatSamples[f.Format]; ok {
			candidates = append(candidates, s)
		}
		candidates = append(candidates, strings.Repeat("a", n), ".", "a/b")
		for _, k := range []int{n, 1, 8, 40, 64} {
			candidates = append(candidates, strings.Repeat("7", k))
		}
	case catalog.Integer, catalog.Number:
		x := 1.0
		if f.Minimum != nil {
			x = *f.Minimum
		}
		if f.ExclusiveMinimum != nil {
			x = *f.ExclusiveMinimum + 1
		}
		if f.Maximum != nil && x > *f.Maximum {
			x = *f.Maximum
		}
		if f.ExclusiveMaximum != nil && x >= *f.ExclusiveMaximum {
			x = *f.ExclusiveMaximum - 0.5
		}
		if f.Type == catalog.Integer {
			candidates = append(candidates, int64(math.Ceil(x)))
		} else {
			candidates = append(candidates, x)
		}
	case catalog.Boolean:
		candidates = append(candidates, true)
	case catalog.JSON:
		candidates = append(candidates, map[string]any{"key": []any{"value", 1.5, nil}})
	case catalog.Array:
		n := 1
		if f.MinItems != nil {
			n = max(n, int(*f.MinItems))
		}
		if f.MaxItems != nil {
			n = min(n, int(*f.MaxItems))
		}
		candidates = append(candidates, distinctItemsOf(f, n))
	}
	for _, c := range candidates {
		if fits(f, c) {
			return c, true
		}
	}
	return nil, false
}

// fits reports whether v, a JSON-shaped value, fits the field, to toolc's
// validator.
func fits(f *catalog.Field, v any) bool {
	data, err := json.Marshal(v)
	return err == nil && validate.CheckValue(f, "the value", data) == nil
}

// validObject makes up an object of fields, an item of a record: a
// valid value of each required field.
func validObject(fields []*catalog.Field) (map[string]any, bool) {
	out := map[string]any{}
	for _, f := range fields {
		if !f.Required {
			continue
		}
		v, ok := validValue(f)
		if !ok {
			return nil, false
		}
		out[f.Name] = v
	}
	return out, true
}

// distinctItemsOf makes up n items of an array field: distinct scalars,
// or for a record n valid items.
func distinctItemsOf(f *catalog.Field, n int) []any {
	if !f.IsRecord() {
		return distinctItems(f.Items, n)
	}
	items := make([]any, n)
	for i := range items {
		item, _ := validObject(f.Fields)
		items[i] = item
	}
	return items
}

func distinctItems(t catalog.Type, n int) []any {
	items := make([]any, n)
	for i := range items {
		switch t {
		case catalog.String:
			items[i] = "item" + strconv.Itoa(i)
		case catalog.Integer:
			items[i] = int64(i + 1)
		case catalog.Number:
			items[i] = float64(i) + 0.5
		case catalog.Boolean:
			items[i] = i%2 == 0
		}
	}
	return items
}

// nonMatching returns a string that breaks f's pattern but no length
// bound, when it finds one.
func nonMatching(f *catalog.Field) (string, bool) {
	cp := *f
	cp.Pattern = ""
	for _, s := range []string{"/abs", "..\\up", "!", "a b c", "-", "", "ZZ"} {
		if fits(&cp, s) && !fits(f, s) {
			return s, true
		}
	}
	return "", false
}

// checkArgs is the verdict of toolc's validator, which the runtime runs on
// every call, on arguments as they come over the wire.
func checkArgs(t *testing.T, req *catalog.Message, data []byte) error {
	t.Helper()
	v, err := validate.NewValidator(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Validate(data)
	return err
}

// wire encodes args as a model would send them, and decodes them again for
// the schema, with json.Numbers.
func wire(t *testing.T, args map[string]any) (forSchema any, data []byte) {
	t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	forSchema, err = jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return forSchema, data
}

// TestSchemaVerdicts validates sample arguments against every projected
// JSON Schema, in both modes: valid samples pass and invalid ones fail.
// Where the projection is not strict, toolc's validator must give the
// same verdict, but for null for an optional field, which it reads as
// absent (see package validate). Where it is strict,
// samples that only break a bound are skipped (the bound may have moved
// into the description), and for OpenAI, whose strict mode requires every
// property, absent optional fields are sent as null, as the model sends
// them.
func TestSchemaVerdicts(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range jsonSchemaTargets {
			for _, m := range modes {
				t.Run(ex.name+"/"+string(target)+m.suffix, func(t *testing.T) {
					checked := 0
					for _, p := range projectTools(t, ex.cat, target, m.opts) {
						sch := compileSchema(t, "https://toolc.test/"+p.tool.Name+"/input.json", p.input)
						openAIStrict := p.strict && (target == catalog.OpenAIChat || target == catalog.OpenAIResponses)
						for _, s := range samples(t, p.tool) {
							if p.strict && (s.bound || s.open) {
								continue
							}
							args := s.args
							want := s.valid
							if openAIStrict {
								args = withNulls(p.tool.Request.Fields, args)
								want = want || s.nullField != ""
							}
							if p.strict {
								// A free-form value goes as a string that holds it.
								args = jsonAsStrings(p.tool.Request.Fields, args)
							}
							forSchema, data := wire(t, args)
							schemaErr := sch.Validate(forSchema)
							if (schemaErr == nil) != want {
								t.Errorf("tool %s, %s %s: schema verdict %v, want valid=%v\nschema: %s",
									p.tool.Name, s.name, argsJSON(args), errText(schemaErr), want, argsJSON(p.input))
							}
							if !p.strict && s.nullField == "" {
								checkErr := checkArgs(t, &p.tool.Request, data)
								if (checkErr == nil) != (schemaErr == nil) {
									t.Errorf("tool %s, %s %s: the validator says %v, the JSON Schema says %v",
										p.tool.Name, s.name, argsJSON(args), errText(checkErr), errText(schemaErr))
								}
							}
							checked++
						}
					}
					if checked == 0 {
						t.Fatal("no samples checked")
					}
				})
			}
		}
	}
}

// TestOutputSchemaVerdicts validates made-up results against MCP's
// outputSchema: every field, or only the required ones, pass; a missing
// required field, a wrong type or an unknown field fail.
func TestOutputSchemaVerdicts(t *testing.T) {
	for _, ex := range examples(t) {
		for _, p := range projectTools(t, ex.cat, catalog.MCP, catalog.ProjectOptions{}) {
			if (p.output != nil) != (p.tool.Response != nil) {
				t.Errorf("%s: outputSchema present=%v, response declared=%v", p.tool.Name, p.output != nil, p.tool.Response != nil)
			}
			if p.output == nil {
				continue
			}
			sch := compileSchema(t, "https://toolc.test/"+p.tool.Name+"/output.json", p.output)
			full, req := map[string]any{}, map[string]any{}
			for _, f := range p.tool.Response.Fields {
				v, ok := validValue(f)
				if !ok {
					t.Fatalf("%s response field %s: cannot make up a valid value", p.tool.Name, f.Name)
				}
				full[f.Name] = v
				if f.Required {
					req[f.Name] = v
				}
			}
			check := func(name string, args map[string]any, valid bool) {
				v, _ := wire(t, args)
				if err := sch.Validate(v); (err == nil) != valid {
					t.Errorf("%s result %s %s: %v, want valid=%v", p.tool.Name, name, argsJSON(args), errText(err), valid)
				}
			}
			check("every field", full, true)
			check("required fields", req, true)
			unknown := copyArgs(full)
			unknown["zz_not_a_field"] = true
			check("unknown field", unknown, false)
			for _, f := range p.tool.Response.Fields {
				if f.Required {
					m := copyArgs(full)
					delete(m, f.Name)
					check(f.Name+" missing", m, false)
				}
				if f.Type == catalog.JSON && !f.Object {
					continue // any value is one
				}
				m := copyArgs(full)
				m[f.Name] = wrongValue(f.Type)
				check(f.Name+" wrong type", m, false)
			}
		}
	}
}

func argsJSON(v any) string {
	data, _ := json.Marshal(v)
	if len(data) > 300 {
		return string(data[:300]) + "…"
	}
	return string(data)
}

func errText(err error) string {
	if err == nil {
		return "valid"
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return "invalid (" + strings.ReplaceAll(ve.Error(), "\n", " ") + ")"
	}
	return "invalid (" + err.Error() + ")"
}

// TestSamplesBreakOneRule checks the sample generator itself: each invalid
// sample is rejected by toolc's validator, so that the schema verdicts
// above test the schemas and not a generator that produced valid
// arguments by mistake.
func TestSamplesBreakOneRule(t *testing.T) {
	kinds := map[string]bool{}
	for _, ex := range examples(t) {
		for _, tool := range ex.cat.ToolNames() {
			var tl *catalog.Tool
			for _, x := range ex.cat.Tools() {
				if x.Name == tool {
					tl = x
				}
			}
			for _, s := range samples(t, tl) {
				_, data := wire(t, s.args)
				err := checkArgs(t, &tl.Request, data)
				// The validator reads null for an optional field as absent.
				if valid := s.valid || s.nullField != ""; (err == nil) != valid {
					t.Errorf("%s %s: checkArgs = %v, want valid=%v", tool, s.name, err, valid)
				}
				if i := strings.Index(s.name, ": "); i >= 0 {
					kinds[s.name[i+2:]] = true
				} else {
					kinds[s.name] = true
				}
			}
		}
	}
	for _, k := range []string{"unknown field", "missing", "null", "wrong type", "fraction", "wrong item type", "not in enum",
		"below minimum", "above maximum", "too short", "too long", "pattern", "too few items", "too many items", "duplicate items",
		"record item with an unknown field", "record item missing a field", "record item field of the wrong type"} {
		if !kinds[k] {
			t.Errorf("no example produced a %q sample; the examples no longer cover it", k)
		}
	}
	if t.Failed() {
		names := make([]string, 0, len(kinds))
		for k := range kinds {
			names = append(names, k)
		}
		slices.Sort(names)
		t.Logf("sample kinds: %v", names)
	}
}
