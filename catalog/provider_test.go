package catalog_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// The provider rules of DESIGN.md §6, checked on the projections of every
// example. The golden files pin the bytes; these tests say why they are
// right.

// The keywords a projection may use: objectKeywords and propertyKeywords
// in a JSON Schema one, of an object and of a property.
var (
	objectKeywords   = []string{"type", "description", "properties", "required", "additionalProperties"}
	propertyKeywords = []string{"type", "description", "enum", "default", "format", "pattern", "minLength", "maxLength",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "items", "minItems", "maxItems", "uniqueItems", "examples"}
	// OpenAI's strict mode (structured outputs) supports these.
	openAIStrictKeywords = []string{"type", "description", "enum", "format", "pattern",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "items", "minItems", "maxItems"}
	// Gemini's Schema object, an OpenAPI 3.0 subset.
	geminiKeywords = []string{"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
		"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
		"anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
)

func ptr[T any](v T) *T { return &v }

// checkKeywords fails on any key of schema outside allowed.
func checkKeywords(t *testing.T, where string, schema map[string]any, allowed []string) {
	t.Helper()
	for k := range schema {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: keyword %q is not allowed here", where, k)
		}
	}
}

// properties returns an object schema's properties, checking that there
// is one per request field.
func properties(t *testing.T, where string, schema map[string]any, m *catalog.Message) map[string]map[string]any {
	t.Helper()
	props := obj(t, schema["properties"])
	out := map[string]map[string]any{}
	for name, p := range props {
		if m.Field(name) == nil {
			t.Errorf("%s: property %q is not a field", where, name)
		}
		out[name] = obj(t, p)
	}
	for _, f := range m.Fields {
		if out[f.Name] == nil {
			t.Errorf("%s: field %q has no property", where, f.Name)
		}
	}
	return out
}

func required(schema map[string]any) []string {
	var names []string
	if r, ok := schema["required"].([]any); ok {
		for _, n := range r {
			names = append(names, n.(string))
		}
	}
	slices.Sort(names)
	return names
}

func requiredFields(m *catalog.Message, all bool) []string {
	var names []string
	for _, f := range m.Fields {
		if f.Required || all {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	return names
}

// bounds lists the keywords of f that are bounds, with their contract
// values as the description shows them.
func bounds(f *catalog.Field) map[string]string {
	out := map[string]string{}
	num := func(k string, v *float64) {
		if v != nil {
			out[k] = catalog.FormatNumber(*v)
		}
	}
	integer := func(k string, v *int64) {
		if v != nil {
			out[k] = fmt.Sprint(*v)
		}
	}
	integer("minLength", f.MinLength)
	integer("maxLength", f.MaxLength)
	num("minimum", f.Minimum)
	num("maximum", f.Maximum)
	num("exclusiveMinimum", f.ExclusiveMinimum)
	num("exclusiveMaximum", f.ExclusiveMaximum)
	integer("minItems", f.MinItems)
	integer("maxItems", f.MaxItems)
	return out
}

// projectedType is the type a projection gives f, as decoded JSON: its
// own, but for a free-form (json) field a string where the projection
// takes it as one (asString: the strict modes and Gemini), "object" for
// an object, and none (nil) for any value.
func projectedType(f *catalog.Field, asString bool) any {
	switch {
	case f.Type != catalog.JSON:
		return string(f.Type)
	case asString:
		return "string"
	case f.Object:
		return "object"
	}
	return nil
}

func isTypeList(v any, first string) bool {
	l, ok := v.([]any)
	return ok && len(l) == 2 && l[0] == first && l[1] == "null"
}

// TestOpenAIRules: in strict mode every property is required, an optional
// property is ["T","null"] with null in its enum, objects are closed, and
// there is no default; what strict mode cannot say is in the description.
// Without strict mode the schema is the contract's, closed.
func TestOpenAIRules(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range []catalog.Target{catalog.OpenAIChat, catalog.OpenAIResponses} {
			for _, m := range modes {
				for _, p := range projectTools(t, ex.cat, target, m.opts) {
					where := fmt.Sprintf("%s %s%s %s", ex.name, target, m.suffix, p.tool.Name)
					if want := m.opts.Strict || p.tool.Strict; p.strict != want {
						t.Errorf("%s: strict is %v, want %v", where, p.strict, want)
					}
					checkKeywords(t, where, p.input, objectKeywords)
					if p.input["additionalProperties"] != false {
						t.Errorf("%s: additionalProperties is %v, want false", where, p.input["additionalProperties"])
					}
					if got, want := required(p.input), requiredFields(&p.tool.Request, p.strict); !slices.Equal(got, want) {
						t.Errorf("%s: required %v, want %v", where, got, want)
					}
					for name, prop := range properties(t, where, p.input, &p.tool.Request) {
						f := p.tool.Request.Field(name)
						w := where + "." + name
						if d, _ := prop["description"].(string); !strings.Contains(d, f.Description) {
							t.Errorf("%s: description %q lost some of the contract's %q", w, d, f.Description)
						}
						if f.IsRecord() {
							checkOpenAIRecord(t, w, obj(t, prop["items"]), f, p.strict)
						}
						typ := projectedType(f, p.strict)
						if !p.strict {
							checkKeywords(t, w, prop, propertyKeywords)
							if prop["type"] != typ {
								t.Errorf("%s: type %v, want %v", w, prop["type"], typ)
							}
							continue
						}
						checkKeywords(t, w, prop, openAIStrictKeywords)
						desc, _ := prop["description"].(string)
						if f.Required {
							if prop["type"] != typ {
								t.Errorf("%s: type %v, want %v", w, prop["type"], typ)
							}
						} else {
							if !isTypeList(prop["type"], typ.(string)) {
								t.Errorf("%s: optional, so type must be [%q, \"null\"], not %v", w, typ, prop["type"])
							}
							if enum, ok := prop["enum"].([]any); ok && !slices.Contains(enum, nil) {
								t.Errorf("%s: optional, so enum %v must hold null", w, enum)
							}
						}
						if f.Default != nil && !strings.Contains(desc, "default: "+catalog.FormatValue(f.Default)) &&
							!strings.Contains(desc, "default: "+jsonValue(f.Default)) {
							t.Errorf("%s: the default %v is not in the description %q", w, f.Default, desc)
						}
						for _, k := range []string{"minLength", "maxLength"} {
							if v, ok := bounds(f)[k]; ok && !strings.Contains(desc, k+": "+v) {
								t.Errorf("%s: %s %s is not in the description %q", w, k, v, desc)
							}
						}
					}
				}
			}
		}
	}
}

// checkOpenAIRecord holds a record's items to OpenAI's rules: a closed
// object, every field required and the optional ones nullable in strict
// mode.
func checkOpenAIRecord(t *testing.T, where string, items map[string]any, f *catalog.Field, strict bool) {
	t.Helper()
	checkKeywords(t, where+".items", items, objectKeywords)
	if items["type"] != "object" || items["additionalProperties"] != false {
		t.Errorf("%s.items: type %v, additionalProperties %v; want a closed object", where, items["type"], items["additionalProperties"])
	}
	msg := &catalog.Message{Fields: f.Fields}
	if got, want := required(items), requiredFields(msg, strict); !slices.Equal(got, want) {
		t.Errorf("%s.items: required %v, want %v", where, got, want)
	}
	for name, prop := range properties(t, where+".items", items, msg) {
		sub := f.Field(name)
		if strict && !sub.Required && !isTypeList(prop["type"], string(sub.Type)) {
			t.Errorf("%s.items.%s: optional in strict mode, so type must be [%q, \"null\"], not %v", where, name, sub.Type, prop["type"])
		}
		if !strict && prop["type"] != string(sub.Type) {
			t.Errorf("%s.items.%s: type %v, want %q", where, name, prop["type"], sub.Type)
		}
	}
}

func jsonValue(v any) string {
	s := fmt.Sprint(v)
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	}
	return s
}

// TestAnthropicRules: strict tools keep no numeric or length bounds, and
// the description carries them instead; other tools keep them as they are.
func TestAnthropicRules(t *testing.T) {
	for _, ex := range examples(t) {
		for _, m := range modes {
			for _, p := range projectTools(t, ex.cat, catalog.Anthropic, m.opts) {
				where := fmt.Sprintf("%s anthropic%s %s", ex.name, m.suffix, p.tool.Name)
				if want := m.opts.Strict || p.tool.Strict; p.strict != want {
					t.Errorf("%s: strict is %v, want %v", where, p.strict, want)
				}
				checkKeywords(t, where, p.input, objectKeywords)
				if p.input["additionalProperties"] != false {
					t.Errorf("%s: additionalProperties is %v, want false", where, p.input["additionalProperties"])
				}
				if got, want := required(p.input), requiredFields(&p.tool.Request, false); !slices.Equal(got, want) {
					t.Errorf("%s: required %v, want %v", where, got, want)
				}
				for name, prop := range properties(t, where, p.input, &p.tool.Request) {
					f := p.tool.Request.Field(name)
					w := where + "." + name
					checkKeywords(t, w, prop, propertyKeywords)
					desc, _ := prop["description"].(string)
					for k, v := range bounds(f) {
						kept := prop[k] != nil
						if k == "minItems" && p.strict && *f.MinItems <= 1 {
							if !kept {
								t.Errorf("%s: minItems %s (0 or 1) was dropped in strict mode", w, v)
							}
							continue
						}
						switch {
						case p.strict && kept:
							t.Errorf("%s: strict, but %s is still a keyword", w, k)
						case p.strict && !strings.Contains(desc, k+": "+v):
							t.Errorf("%s: strict, and %s %s is not in the description %q", w, k, v, desc)
						case !p.strict && (!kept || fmt.Sprint(prop[k]) != v):
							t.Errorf("%s: %s is %v, want %s", w, k, prop[k], v)
						}
					}
					if p.strict && prop["pattern"] != nil {
						t.Errorf("%s: strict, but pattern is still a keyword", w)
					}
				}
			}
		}
	}
}

// TestGeminiRules: Gemini's schema is an OpenAPI subset: upper-case types,
// optional fields nullable, no additionalProperties and no $schema, enums
// only on strings, formats only date-time, one example, and no parameters
// at all for a tool without fields.
func TestGeminiRules(t *testing.T) {
	upper := regexp.MustCompile(`^(STRING|INTEGER|NUMBER|BOOLEAN|ARRAY|OBJECT)$`)
	for _, ex := range examples(t) {
		for _, m := range modes {
			for _, p := range projectTools(t, ex.cat, catalog.Gemini, m.opts) {
				where := fmt.Sprintf("%s gemini%s %s", ex.name, m.suffix, p.tool.Name)
				if len(p.tool.Request.Fields) == 0 {
					if p.input != nil {
						t.Errorf("%s: a tool without fields has parameters", where)
					}
					continue
				}
				checkKeywords(t, where, p.input, geminiKeywords)
				if p.input["type"] != "OBJECT" {
					t.Errorf("%s: type %v, want OBJECT", where, p.input["type"])
				}
				if got, want := required(p.input), requiredFields(&p.tool.Request, false); !slices.Equal(got, want) {
					t.Errorf("%s: required %v, want %v", where, got, want)
				}
				for name, prop := range properties(t, where, p.input, &p.tool.Request) {
					f := p.tool.Request.Field(name)
					w := where + "." + name
					checkKeywords(t, w, prop, geminiKeywords)
					if want := strings.ToUpper(projectedType(f, true).(string)); prop["type"] != want || !upper.MatchString(prop["type"].(string)) {
						t.Errorf("%s: type %v, want %s", w, prop["type"], want)
					}
					if items, ok := prop["items"].(map[string]any); ok {
						if items["type"] != strings.ToUpper(string(f.Items)) {
							t.Errorf("%s: items type %v, want %s", w, items["type"], strings.ToUpper(string(f.Items)))
						}
					}
					if got := prop["nullable"] == true; got != !f.Required {
						t.Errorf("%s: nullable is %v, want %v", w, got, !f.Required)
					}
					if prop["enum"] != nil && f.Type != catalog.String {
						t.Errorf("%s: enum on a %s", w, f.Type)
					}
					if len(f.Enum) > 0 && f.Type == catalog.String && prop["enum"] == nil {
						t.Errorf("%s: the string enum was dropped", w)
					}
					if len(f.Enum) > 0 && f.Type != catalog.String && !strings.Contains(prop["description"].(string), "enum: ") {
						t.Errorf("%s: the %s enum is not in the description", w, f.Type)
					}
					if fm, ok := prop["format"]; ok && fm != "date-time" {
						t.Errorf("%s: format %v", w, fm)
					}
				}
			}
		}
	}
}

var mcpNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// TestMCPRules: names are the derived or pinned MCP names, valid and
// unique; the title and the annotation hints are the contract's; the
// outputSchema is the response's.
func TestMCPRules(t *testing.T) {
	for _, ex := range examples(t) {
		seen := map[string]string{}
		data, err := ex.cat.ProjectJSON(catalog.MCP, catalog.ProjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var tools []map[string]any
		if err := json.Unmarshal(data, &tools); err != nil {
			t.Fatal(err)
		}
		for i, p := range projectTools(t, ex.cat, catalog.MCP, catalog.ProjectOptions{}) {
			raw := tools[i]
			name := raw["name"].(string)
			where := ex.name + " mcp " + name
			if !mcpNameRE.MatchString(name) {
				t.Errorf("%s: not a valid MCP name", where)
			}
			if other, dup := seen[name]; dup {
				t.Errorf("%s: the name of both %s and %s", where, other, p.tool.Name)
			}
			seen[name] = p.tool.Name
			if p.tool.MCPName != "" && name != p.tool.MCPName {
				t.Errorf("%s: the pinned name is %q", where, p.tool.MCPName)
			}
			if p.tool.MCPName == "" && name != catalog.MCPName(p.service.Name, p.tool.Name) {
				t.Errorf("%s: want %q", where, catalog.MCPName(p.service.Name, p.tool.Name))
			}
			if title, _ := raw["title"].(string); title != p.tool.Title {
				t.Errorf("%s: title %q, want %q", where, title, p.tool.Title)
			}
			a := p.tool.Annotations
			hints, _ := raw["annotations"].(map[string]any)
			for k, v := range map[string]*bool{"readOnlyHint": a.ReadOnly, "destructiveHint": a.Destructive, "idempotentHint": a.Idempotent, "openWorldHint": a.OpenWorld} {
				got, set := hints[k]
				// readOnlyHint and idempotentHint are sent as go-sdk sends
				// them, always, false meaning unset as MCP defines it.
				always := hints != nil && (k == "readOnlyHint" || k == "idempotentHint")
				switch {
				case v == nil && always:
					if got != false {
						t.Errorf("%s: %s is %v, but the contract leaves it unset (false)", where, k, got)
					}
				case v == nil && set:
					t.Errorf("%s: %s is %v, but the contract leaves it unset", where, k, got)
				case v != nil && got != *v:
					t.Errorf("%s: %s is %v, want %v", where, k, got, *v)
				}
			}
			checkKeywords(t, where, p.input, objectKeywords)
			if got, want := required(p.input), requiredFields(&p.tool.Request, false); !slices.Equal(got, want) {
				t.Errorf("%s: required %v, want %v", where, got, want)
			}
			for name, prop := range properties(t, where, p.input, &p.tool.Request) {
				// MCP's input schemas may also say which header a client
				// mirrors the argument into (SEP-2243), and say it exactly
				// where the contract does.
				checkKeywords(t, where+"."+name, prop, append(propertyKeywords[:len(propertyKeywords):len(propertyKeywords)], "x-mcp-header"))
				var header string
				for _, f := range p.tool.Request.Fields {
					if f.Name == name {
						header = f.MCPHeader
					}
				}
				if got, _ := prop["x-mcp-header"].(string); got != header {
					t.Errorf("%s.%s: x-mcp-header %q, want %q", where, name, got, header)
				}
			}
			if p.tool.Response != nil {
				if p.output == nil {
					t.Errorf("%s: the response has no outputSchema", where)
					continue
				}
				checkKeywords(t, where+" output", p.output, objectKeywords)
				if got, want := required(p.output), requiredFields(p.tool.Response, false); !slices.Equal(got, want) {
					t.Errorf("%s: output required %v, want %v", where, got, want)
				}
				properties(t, where+" output", p.output, p.tool.Response)
			}
		}
	}
}

// TestBedrockRules: Bedrock takes the contract's JSON Schema, closed; a
// strict tool carries strict: true, and its schema is Anthropic's strict
// one.
func TestBedrockRules(t *testing.T) {
	for _, ex := range examples(t) {
		for _, m := range modes {
			bedrock := projectTools(t, ex.cat, catalog.Bedrock, m.opts)
			anthropic := projectTools(t, ex.cat, catalog.Anthropic, m.opts)
			for i, p := range bedrock {
				if want := m.opts.Strict || p.tool.Strict; p.strict != want {
					t.Errorf("%s bedrock%s %s: strict is %v, want %v", ex.name, m.suffix, p.tool.Name, p.strict, want)
				}
				if p.strict && !reflect.DeepEqual(p.input, anthropic[i].input) {
					t.Errorf("%s bedrock%s %s: strict schema %v is not Anthropic's %v", ex.name, m.suffix, p.tool.Name, p.input, anthropic[i].input)
				}
			}
		}
		for _, p := range projectTools(t, ex.cat, catalog.Bedrock, catalog.ProjectOptions{}) {
			if p.strict {
				continue
			}
			where := ex.name + " bedrock " + p.tool.Name
			checkKeywords(t, where, p.input, objectKeywords)
			if p.input["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is %v, want false", where, p.input["additionalProperties"])
			}
			if got, want := required(p.input), requiredFields(&p.tool.Request, false); !slices.Equal(got, want) {
				t.Errorf("%s: required %v, want %v", where, got, want)
			}
			for name, prop := range properties(t, where, p.input, &p.tool.Request) {
				f := p.tool.Request.Field(name)
				checkKeywords(t, where+"."+name, prop, propertyKeywords)
				for k, v := range bounds(f) {
					if fmt.Sprint(prop[k]) != v {
						t.Errorf("%s.%s: %s is %v, want %s", where, name, k, prop[k], v)
					}
				}
			}
		}
	}
}

// TestLongFieldDescriptions: no provider documents a limit on the
// description of a parameter, so none is cut, in any target or mode, and
// the constraints a target moves into it follow the whole text. Only
// OpenAI's tool descriptions are cut, at the 1024 characters its API
// enforces.
func TestLongFieldDescriptions(t *testing.T) {
	long := strings.Repeat("Which of the nine methods to run; each is documented here. ", 40)
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "gh", Version: "1.0.0", Description: "d",
		Tools: []*catalog.Tool{{
			Name: "pull_request_read", Description: strings.Repeat("Read a pull request. ", 60),
			Request: catalog.Message{Fields: []*catalog.Field{{
				Name: "method", Type: catalog.String, Description: long,
				Default: "get", MinLength: ptr(int64(1)),
			}}},
		}},
	}}}
	cat.Seal()
	for _, target := range catalog.Targets() {
		for _, m := range modes {
			data, err := cat.ProjectJSON(target, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if !strings.Contains(text, long) {
				t.Errorf("%s%s: the field's description was cut", target, m.suffix)
			}
			if m.opts.Strict && (target == catalog.OpenAIChat || target == catalog.OpenAIResponses) &&
				!strings.Contains(text, long+`\n\n{default: \"get\", minLength: 1}`) {
				t.Errorf("%s%s: the moved constraints do not follow the whole description:\n%s", target, m.suffix, text)
			}
			cut := target == catalog.OpenAIChat || target == catalog.OpenAIResponses
			if strings.Contains(text, cat.Services[0].Tools[0].Description) == cut {
				t.Errorf("%s%s: tool description cut is %v, want %v", target, m.suffix, !cut, cut)
			}
		}
	}
}

// TestItemEnums: an enum on an array field is its items' (a
// multi-select), projected into items in every target's dialect: Gemini's
// enums are strings only, so an integer one is stated in the description;
// OpenAI's strict mode makes the optional array nullable, not its items.
func TestItemEnums(t *testing.T) {
	labels := &catalog.Field{Name: "labels", Type: catalog.Array, Items: catalog.String, Description: "Labels",
		Enum: []any{"bug", "idea"}, Default: []any{"bug"}}
	levels := &catalog.Field{Name: "levels", Type: catalog.Array, Items: catalog.Integer, Description: "Levels",
		Required: true, Enum: []any{int64(1), int64(2)}}
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "svc", Version: "1.0.0", Description: "d",
		Tools: []*catalog.Tool{{Name: "tag", Description: "d", Request: catalog.Message{Fields: []*catalog.Field{labels, levels}}}}}}}
	cat.Seal()
	for _, target := range catalog.Targets() {
		for _, m := range modes {
			p := projectTools(t, cat, target, m.opts)[0]
			where := string(target) + m.suffix
			for _, f := range []*catalog.Field{labels, levels} {
				prop := obj(t, p.input["properties"].(map[string]any)[f.Name])
				if _, ok := prop["enum"]; ok {
					t.Errorf("%s %s: the enum is on the array, not its items: %v", where, f.Name, prop)
				}
				items := obj(t, prop["items"])
				enum, _ := items["enum"].([]any)
				desc, _ := prop["description"].(string)
				if target == catalog.Gemini && f.Items == catalog.Integer {
					if enum != nil || !strings.Contains(desc, "{enum: [1,2]}") {
						t.Errorf("%s %s: want the enum in the description, got items %v, description %q", where, f.Name, items, desc)
					}
					continue
				}
				if len(enum) != len(f.Enum) || fmt.Sprint(enum) != fmt.Sprint(f.Enum) {
					t.Errorf("%s %s: items enum %v, want %v", where, f.Name, enum, f.Enum)
				}
			}
		}
	}
}
