package tokens

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolc/toolc/catalog"
)

// OpenAI does not send a model the JSON of a function tool: it renders the
// tools as TypeScript types in a namespace of the prompt. OpenAI publishes
// the format, and a renderer of it, with its open-weight models (the
// harmony format: github.com/openai/harmony, docs/format.md); the API's
// counts agree with it. On the six requests whose prompt_tokens OpenAI's
// cookbook ("How to count tokens with tiktoken", gpt-4o and gpt-4) and
// openai-chat-tokens' API-checked tests (gpt-3.5-turbo) publish, each tool
// block renders to exactly the difference the API bills, and the wrapper
// to one token more than it bills (TestPublishedOpenAICounts). A tool
// looks like this:
//
//	// Get the current weather in a given location
//	type get_current_weather = (_: {
//	// The city and state, e.g. San Francisco, CA
//	location: string,
//	unit?: "celsius" | "fahrenheit", // default: celsius
//	}) => any;
//
// As the harmony renderer does, the TypeScript keeps a schema's types,
// string enums, descriptions, string examples and defaults, and drops its
// other keywords (bounds, pattern, format), which the model then never
// reads: toolc's projections put what a target cannot enforce into the
// description instead, where it is rendered and counted.

// openAIHeader and openAIFooter wrap the tools of a request.
const (
	openAIHeader = "# Tools\n\n## functions\n\nnamespace functions {\n\n"
	openAIFooter = "} // namespace functions"
	// openAIWrapperOverCount is the one token by which the wrapper above
	// counts more than the API bills for it (see TestPublishedOpenAICounts).
	openAIWrapperOverCount = 1
)

// renderOpenAI appends the TypeScript of one function to b.
func renderOpenAI(b *strings.Builder, f *catalog.OpenAIFunction) {
	for line := range strings.Lines(f.Description) {
		b.WriteString("// ")
		b.WriteString(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
		b.WriteByte('\n')
	}
	b.WriteString("type ")
	b.WriteString(f.Name)
	p := f.Parameters
	if p == nil || len(p.Properties) == 0 {
		b.WriteString(" = () => any;\n\n")
		return
	}
	b.WriteString(" = (_: ")
	if p.Description != "" {
		// The renderer writes an object's description before its brace,
		// which for the parameters is after "(_: ".
		b.WriteString("// ")
		b.WriteString(p.Description)
		b.WriteByte('\n')
	}
	b.WriteString("{\n")
	for _, prop := range p.Properties {
		renderProperty(b, "", prop.Name, prop.Schema, slices.Contains(p.Required, prop.Name))
	}
	b.WriteString("}) => any;\n\n")
}

// renderProperty appends one property of an object, its lines indented
// by indent: the parameters' are not, and those of a record's items by
// four spaces more than the record field's, as the harmony renderer
// indents an object nested in a property.
func renderProperty(b *strings.Builder, indent, name string, s *catalog.Schema, req bool) {
	if s.Description != "" {
		b.WriteString(indent)
		b.WriteString("// ")
		b.WriteString(s.Description)
		b.WriteByte('\n')
	}
	var examples []string
	for _, e := range s.Examples {
		if e, ok := e.(string); ok {
			examples = append(examples, e)
		}
	}
	if len(examples) > 0 {
		b.WriteString(indent)
		b.WriteString("// Examples:\n")
		for _, e := range examples {
			b.WriteString(indent)
			b.WriteString(`// - "`)
			b.WriteString(e)
			b.WriteString("\"\n")
		}
	}
	b.WriteString(indent)
	b.WriteString(name)
	if !req {
		b.WriteByte('?')
	}
	b.WriteString(": ")
	b.WriteString(tsType(s, indent+"    "))
	b.WriteByte(',')
	if s.Default != nil {
		b.WriteString(" // default: ")
		if d, ok := s.Default.(string); ok {
			if len(s.Enum) == 0 {
				b.WriteString(`"` + d + `"`)
			} else {
				b.WriteString(d)
			}
		} else {
			j, _ := json.Marshal(s.Default)
			b.Write(j)
		}
	}
	b.WriteByte('\n')
}

// tsType is the TypeScript of a schema's type. A type list such as
// ["string", "null"] (an optional field in strict mode) is the union of
// its types, without the enum.
func tsType(s *catalog.Schema, indent string) string {
	if len(s.Type) > 1 {
		names := make([]string, len(s.Type))
		for i, t := range s.Type {
			names[i] = tsName(t)
		}
		return strings.Join(names, " | ")
	}
	if len(s.Type) == 0 {
		return "any"
	}
	switch t := s.Type[0]; t {
	case "string":
		var vals []string
		for _, v := range s.Enum {
			if v, ok := v.(string); ok {
				vals = append(vals, `"`+v+`"`)
			}
		}
		if len(vals) > 0 {
			return strings.Join(vals, " | ")
		}
		return "string"
	case "array":
		if s.Items == nil {
			return "Array<any>"
		}
		return tsType(s.Items, indent) + "[]"
	case "object":
		// The items of a record: an object, its properties one level in.
		var b strings.Builder
		b.WriteString("{\n")
		for _, p := range s.Properties {
			renderProperty(&b, indent, p.Name, p.Schema, slices.Contains(s.Required, p.Name))
		}
		b.WriteString(indent)
		b.WriteString("}")
		return b.String()
	default:
		return tsName(t)
	}
}

func tsName(t string) string {
	switch t {
	case "integer":
		return "number"
	case "string", "number", "boolean", "null", "object":
		return t
	}
	return "any"
}
