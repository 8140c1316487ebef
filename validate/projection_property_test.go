package validate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/validate"
)

// TestValidatorHoldsToProjections is a property test over every tool of
// the examples, of a generated corpus of 300 tools and of a catalog of
// records, every target and both modes:
//   - the arguments a strict-mode model sends (every property present, null
//     for each optional one it leaves out) pass the runtime, and the
//     projected schema;
//   - arguments the projected schema rejects, checked with
//     santhosh-tekuri/jsonschema/v6 (format assertions on), are rejected by
//     the runtime. The arguments are mutations of valid ones: each field
//     of the wrong type, outside its enum or bounds, null where required,
//     left out, and an unknown field; and for a record, an item of another
//     type, and each field of an item mutated as above. A strict
//     projection requires every property, so there an absent optional
//     field, of the arguments or of an item, is sent as null, as the model
//     sends it.
//
// Gemini's schema is OpenAPI, not JSON Schema: it is held to the first
// property only.
func TestValidatorHoldsToProjections(t *testing.T) {
	var cats []*catalog.Catalog
	for _, dir := range []string{"../examples/...", writeCorpus(t)} {
		res, err := compiler.Compile(compiler.Config{}, dir)
		if err != nil || res.HasErrors() {
			t.Fatal(err, res.Diagnostics)
		}
		cats = append(cats, res.Catalog)
	}
	cats = append(cats, recordsCatalog())
	tools, rejected, checked := 0, 0, 0
	for _, cat := range cats {
		for _, target := range catalog.Targets() {
			for _, strict := range []bool{false, true} {
				schemas := projectedInputs(t, cat, target, strict)
				for s, tool := range cat.Tools() {
					v, err := validate.NewValidator(&tool.Request)
					if err != nil {
						t.Fatal(err)
					}
					base, ok := validArgs(tool)
					if !ok {
						continue
					}
					tools++
					where := fmt.Sprintf("%s %s strict=%v", tool.Name, target, strict)
					wireStrict := strict || tool.Strict
					if target == catalog.MCP || target == catalog.Bedrock && !wireStrict {
						wireStrict = false
					}
					// Free-form values go as strings that hold them where the
					// projection says so: the strict modes and Gemini.
					asStrings := wireStrict || target == catalog.Gemini
					// A strict-mode model's arguments.
					sent := withNulls(tool, base)
					if asStrings {
						sent = jsonAsStrings(tool.Request.Fields, sent)
					}
					if _, err := v.Validate(mustJSON(t, sent)); err != nil {
						t.Errorf("%s: the runtime rejects what a strict-mode model sends, %s: %v", where, mustJSON(t, sent), err)
					}
					sch := schemas[tool.ExposedMCPName(s.Name)]
					if sch == nil {
						continue // Gemini
					}
					if err := sch.Validate(decode(t, mustJSON(t, sent))); err != nil && nullsAllowed(target, wireStrict) {
						t.Errorf("%s: the projected schema rejects what a strict-mode model sends, %s: %v", where, mustJSON(t, sent), err)
					}
					for _, args := range mutations(tool, base) {
						forSchema := args
						if nullsAllowed(target, wireStrict) {
							forSchema = withNulls(tool, args)
						}
						if asStrings {
							forSchema = jsonAsStrings(tool.Request.Fields, forSchema)
						} else {
							// Where the schema states the value, a string that
							// holds it is the value to the runtime, by design.
							forSchema = jsonFromStrings(tool.Request.Fields, forSchema)
						}
						checked++
						if sch.Validate(decode(t, mustJSON(t, forSchema))) == nil {
							continue
						}
						rejected++
						if out, err := v.Validate(mustJSON(t, args)); err == nil {
							t.Errorf("%s: the projected schema rejects %s, the runtime lets it through as %s", where, mustJSON(t, forSchema), out)
						}
					}
				}
			}
		}
	}
	if tools < 300 || rejected < 1000 {
		t.Fatalf("only %d tools and %d rejected arguments (of %d) checked", tools, rejected, checked)
	}
	t.Logf("%d tool projections, %d of %d mutated arguments rejected by the schema, and by the runtime", tools, rejected, checked)
}

// nullsAllowed reports whether the target's strict projection makes every
// property required and optional ones nullable: OpenAI's.
func nullsAllowed(target catalog.Target, strict bool) bool {
	return strict && (target == catalog.OpenAIChat || target == catalog.OpenAIResponses)
}

func writeCorpus(t *testing.T) string {
	dir := t.TempDir()
	if _, err := corpus.Write(dir, corpus.ForTools(300)); err != nil {
		t.Fatal(err)
	}
	return dir + "/..."
}

// projectedInputs compiles each tool's projected input schema, by MCP
// name; nil for Gemini.
func projectedInputs(t *testing.T, cat *catalog.Catalog, target catalog.Target, strict bool) map[string]*jsonschema.Schema {
	if target == catalog.Gemini {
		return map[string]*jsonschema.Schema{}
	}
	data, err := cat.ProjectJSON(target, catalog.ProjectOptions{Strict: strict})
	if err != nil {
		t.Fatal(err)
	}
	var elems []map[string]any
	if err := json.Unmarshal(data, &elems); err != nil {
		t.Fatal(err)
	}
	var names []string
	for s, tool := range cat.Tools() {
		names = append(names, tool.ExposedMCPName(s.Name))
	}
	if target == catalog.MCP {
		slices.Sort(names) // tools/list's order
	}
	out := map[string]*jsonschema.Schema{}
	for i, e := range elems {
		var schema any
		switch target {
		case catalog.OpenAIChat:
			schema = e["function"].(map[string]any)["parameters"]
		case catalog.OpenAIResponses:
			schema = e["parameters"]
		case catalog.Anthropic:
			schema = e["input_schema"]
		case catalog.Bedrock:
			schema = e["toolSpec"].(map[string]any)["inputSchema"].(map[string]any)["json"]
		case catalog.MCP:
			schema = e["inputSchema"]
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		url := "mem://" + names[i]
		if err := c.AddResource(url, decode(t, mustJSON(t, schema))); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatal(err)
		}
		out[names[i]] = sch
	}
	return out
}

// recordsCatalog is a catalog of record fields, with every keyword on the
// fields of their items, in a strict tool and in one that is not.
func recordsCatalog() *catalog.Catalog {
	i64 := func(n int64) *int64 { return &n }
	f64 := func(x float64) *float64 { return &x }
	fields := func() []*catalog.Field {
		return []*catalog.Field{
			{Name: "path", Type: catalog.String, Description: "File", Required: true, MinLength: i64(1)},
			{Name: "edits", Type: catalog.Array, Items: catalog.Object, Description: "Edits", Required: true, MinItems: i64(1), MaxItems: i64(3), Fields: []*catalog.Field{
				{Name: "oldText", Type: catalog.String, Description: "Find", Required: true, MinLength: i64(1), MaxLength: i64(200)},
				{Name: "newText", Type: catalog.String, Description: "Replace", Required: true},
				{Name: "count", Type: catalog.Integer, Description: "How many", Default: int64(1), Minimum: f64(1), Maximum: f64(99)},
				{Name: "mode", Type: catalog.String, Description: "Match", Enum: []any{"exact", "regex"}},
				{Name: "ratio", Type: catalog.Number, Description: "Fuzz", ExclusiveMinimum: f64(0), Maximum: f64(1)},
				{Name: "ok", Type: catalog.Boolean, Description: "Flag"},
				{Name: "lines", Type: catalog.Array, Items: catalog.Integer, Description: "Lines", MaxItems: i64(3), UniqueItems: true},
				{Name: "tags", Type: catalog.Array, Items: catalog.String, Description: "Tags", Enum: []any{"a", "b"}},
			}},
			{Name: "notes", Type: catalog.Array, Items: catalog.Object, Description: "Notes", Fields: []*catalog.Field{
				{Name: "text", Type: catalog.String, Description: "A note", Required: true},
				{Name: "level", Type: catalog.Integer, Description: "A level", Enum: []any{int64(1), int64(2)}},
				{Name: "meta", Type: catalog.JSON, Description: "Anything", Required: true},
			}},
			// Free-form values.
			{Name: "filter", Type: catalog.JSON, Object: true, Description: "A query", Required: true},
			{Name: "patch", Type: catalog.JSON, Description: "A patch"},
		}
	}
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "records", Version: "1.0.0", Description: "d", Tools: []*catalog.Tool{
		{Name: "edit", Description: "Edit", Request: catalog.Message{Fields: fields()}},
		{Name: "edit_strict", Description: "Edit, strict", Strict: true, Request: catalog.Message{Fields: fields()}},
	}}}}
	c.Seal()
	return c
}

// validArgs builds arguments that fit the request: each required field's
// first example, or default, or a value made to fit its bounds. It fails
// for a field whose pattern or format it cannot be sure to meet.
func validArgs(tool *catalog.Tool) (map[string]any, bool) {
	return validObject(tool.Request.Fields)
}

// validObject builds an object of fields: the arguments, or an item of a
// record.
func validObject(fields []*catalog.Field) (map[string]any, bool) {
	args := map[string]any{}
	for _, f := range fields {
		if !f.Required {
			continue
		}
		v, ok := validValue(f)
		if !ok {
			return nil, false
		}
		args[f.Name] = v
	}
	return args, true
}

func validValue(f *catalog.Field) (any, bool) {
	for _, ex := range f.Examples {
		if fits(f, ex) {
			return ex, true
		}
	}
	if f.Default != nil {
		return f.Default, true
	}
	if len(f.Enum) > 0 && f.Type != catalog.Array {
		return f.Enum[0], true
	}
	var v any
	switch f.Type {
	case catalog.String:
		if f.Pattern != "" || f.Format != "" {
			return nil, false
		}
		n := int64(1)
		if f.MinLength != nil {
			n = max(n, *f.MinLength)
		}
		v = strings.Repeat("a", int(n))
	case catalog.Integer, catalog.Number:
		x := 1.0
		switch {
		case f.Minimum != nil:
			x = *f.Minimum
		case f.ExclusiveMinimum != nil:
			x = *f.ExclusiveMinimum + 1
		case f.Maximum != nil:
			x = min(x, *f.Maximum)
		}
		if f.Type == catalog.Integer {
			v = int64(x)
		} else {
			v = x
		}
	case catalog.Boolean:
		v = true
	case catalog.JSON:
		v = map[string]any{"a": []any{int64(1), nil}}
	case catalog.Array:
		n := int64(0)
		if f.MinItems != nil {
			n = *f.MinItems
		}
		items := []any{}
		if f.IsRecord() {
			n = max(n, 1) // an item to mutate
		}
		for i := int64(0); i < n; i++ {
			switch {
			case f.IsRecord():
				item, ok := validObject(f.Fields)
				if !ok {
					return nil, false
				}
				items = append(items, item)
			case int64(len(f.Enum)) > i:
				items = append(items, f.Enum[i])
			case f.Items == catalog.String:
				items = append(items, fmt.Sprint("item", i))
			case f.Items == catalog.Boolean && i < 2:
				items = append(items, i == 0)
			case f.Items == catalog.Integer || f.Items == catalog.Number:
				items = append(items, i)
			default:
				return nil, false
			}
		}
		v = items
	}
	return v, fits(f, v)
}

// fits reports whether v, a JSON-shaped value, fits the field.
func fits(f *catalog.Field, v any) bool {
	data, err := json.Marshal(v)
	return err == nil && validate.CheckValue(f, "the value", data) == nil
}

// jsonAsStrings writes the value of every free-form (JSON) field, of the
// arguments or of an item of a record, as a string that holds its JSON
// text, as a model sends it to a projection that states such a field as
// a string. null stays null: it is an optional field left out.
func jsonAsStrings(fields []*catalog.Field, args map[string]any) map[string]any {
	out := clone(args)
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

// jsonFromStrings reads the value of every free-form (JSON) field that is
// a string holding a JSON text (an object's, for an object field) as that
// value, as the runtime does, of the arguments or of an item of a record.
func jsonFromStrings(fields []*catalog.Field, args map[string]any) map[string]any {
	out := clone(args)
	for _, f := range fields {
		switch x := out[f.Name].(type) {
		case string:
			if f.Type != catalog.JSON {
				continue
			}
			var v any
			if json.Unmarshal([]byte(x), &v) != nil {
				continue
			}
			if _, isObj := v.(map[string]any); isObj || !f.Object {
				out[f.Name] = v
			}
		case []any:
			if !f.IsRecord() {
				continue
			}
			with := make([]any, len(x))
			for i, item := range x {
				with[i] = item
				if m, isObj := item.(map[string]any); isObj {
					with[i] = jsonFromStrings(f.Fields, m)
				}
			}
			out[f.Name] = with
		}
	}
	return out
}

// withNulls adds null for every optional field that args leaves out, and
// that an item of a record leaves out.
func withNulls(tool *catalog.Tool, args map[string]any) map[string]any {
	return withNullsIn(tool.Request.Fields, args)
}

func withNullsIn(fields []*catalog.Field, args map[string]any) map[string]any {
	out := clone(args)
	for _, f := range fields {
		x, ok := out[f.Name]
		if !ok && !f.Required {
			out[f.Name] = nil
		}
		if items, isList := x.([]any); isList && f.IsRecord() {
			withItems := make([]any, len(items))
			for i, item := range items {
				withItems[i] = item
				if m, isObj := item.(map[string]any); isObj {
					withItems[i] = withNullsIn(f.Fields, m)
				}
			}
			out[f.Name] = withItems
		}
	}
	return out
}

// mutations are variants of valid arguments, one change each.
func mutations(tool *catalog.Tool, base map[string]any) []map[string]any {
	out := objectMutations(tool.Request.Fields, base)
	for _, f := range tool.Request.Fields {
		items, ok := base[f.Name].([]any)
		if !f.IsRecord() || !ok || len(items) == 0 {
			continue
		}
		// An item of another kind, and each mutation of an item.
		variants := []any{3, "x", nil, []any{}}
		for _, m := range objectMutations(f.Fields, items[0].(map[string]any)) {
			variants = append(variants, m)
		}
		for _, v := range variants {
			m := clone(base)
			m[f.Name] = append([]any{v}, items[1:]...)
			out = append(out, m)
		}
	}
	return out
}

// objectMutations are variants of a valid object of fields, the
// arguments or an item of a record, one change each.
func objectMutations(fields []*catalog.Field, base map[string]any) []map[string]any {
	var out []map[string]any
	with := func(name string, v any) {
		m := clone(base)
		m[name] = v
		out = append(out, m)
	}
	with("not_a_field_of_any_tool", 1)
	for _, f := range fields {
		if f.Required {
			m := clone(base)
			delete(m, f.Name)
			out = append(out, m)
			with(f.Name, nil)
		}
		with(f.Name, map[string]any{"nested": true})
		switch f.Type {
		case catalog.String:
			with(f.Name, 42)
			with(f.Name, "")
			with(f.Name, strings.Repeat("z", 300))
			with(f.Name, "not-an-enum-value")
		case catalog.Integer, catalog.Number:
			with(f.Name, "3")
			with(f.Name, 1.5)
			with(f.Name, -1e9)
			with(f.Name, 1e9)
			with(f.Name, 0)
		case catalog.Boolean:
			with(f.Name, "true")
		case catalog.JSON:
			with(f.Name, []any{1})
			with(f.Name, "[1]")
			with(f.Name, "{")
			with(f.Name, 42)
			with(f.Name, "{\"a\":1}")
		case catalog.Array:
			with(f.Name, "x")
			with(f.Name, []any{})
			with(f.Name, []any{map[string]any{}})
			with(f.Name, []any{"zz-not-in-enum", "zz-not-in-enum"})
			with(f.Name, []any{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
		}
	}
	return out
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
