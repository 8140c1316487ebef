package tokens

import (
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/toolc/toolc/catalog"
)

type message struct{ role, content string }

// promptTokens is what a Chat Completions request of messages and tools
// is billed, as OpenAI's cookbook counts messages ("How to count tokens
// with tiktoken": 3 tokens a message, and 3 to prime the reply) and with
// the tools rendered as toolc renders them: appended to the first system
// message after a blank line, or in a system message of their own.
func promptTokens(t *testing.T, enc *codec.Codec, messages []message, tools []catalog.OpenAIFunction) int {
	t.Helper()
	count := func(s string) int {
		n, err := enc.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var b strings.Builder
	b.WriteString(openAIHeader)
	for i := range tools {
		renderOpenAI(&b, &tools[i])
	}
	b.WriteString(openAIFooter)
	rendered := b.String()
	n := 3
	system := false
	for _, m := range messages {
		content := m.content
		if m.role == "system" && !system {
			system = true
			content += "\n\n" + rendered
		}
		n += 3 + count(m.role) + count(content)
	}
	if !system {
		n += 3 + count("system") + count(rendered)
	}
	return n - openAIWrapperOverCount
}

func object(required []string, props ...catalog.Property) *catalog.ObjectSchema {
	return &catalog.ObjectSchema{Type: catalog.TypeList{"object"}, Properties: props, Required: required}
}

func prop(name, typ, desc string, enum ...any) catalog.Property {
	return catalog.Property{Name: name, Schema: &catalog.Schema{Type: catalog.TypeList{typ}, Description: desc, Enum: enum}}
}

// TestPublishedOpenAICounts holds the rendering to every prompt_tokens
// figure published for a request with flat function tools: the OpenAI
// cookbook's get_current_weather request on gpt-4o (o200k_base) and gpt-4
// (cl100k_base), and the gpt-3.5-turbo requests of openai-chat-tokens'
// tests (github.com/hmarr/openai-chat-tokens, tests/token-counts.test.ts),
// which it checked against the API. The tool blocks account for each
// figure exactly; the wrapper for one token more than the API bills,
// which openAIWrapperOverCount takes off.
func TestPublishedOpenAICounts(t *testing.T) {
	o200k, cl100k := codec.NewO200kBase(), codec.NewCl100kBase()
	weather := catalog.OpenAIFunction{
		Name:        "get_current_weather",
		Description: "Get the current weather in a given location",
		Parameters: object([]string{"location"},
			prop("location", "string", "The city and state, e.g. San Francisco, CA"),
			prop("unit", "string", "The unit of temperature to return", "celsius", "fahrenheit")),
	}
	weatherMessages := []message{
		{"system", "You are a helpful assistant that can answer to questions about the weather."},
		{"user", "What's the weather like in San Francisco?"},
	}
	empty := object(nil)
	hello := []message{{"user", "hello"}}
	tests := []struct {
		name     string
		enc      *codec.Codec
		messages []message
		tools    []catalog.OpenAIFunction
		want     int
	}{
		{"cookbook gpt-4o", o200k, weatherMessages, []catalog.OpenAIFunction{weather}, 101},
		{"cookbook gpt-4", cl100k, weatherMessages, []catalog.OpenAIFunction{weather}, 105},
		{"foo", cl100k, hello, []catalog.OpenAIFunction{{Name: "foo", Parameters: empty}}, 31},
		{"foo described", cl100k, hello, []catalog.OpenAIFunction{{Name: "foo", Description: "Do a foo", Parameters: empty}}, 36},
		{"bing_bong", cl100k, hello, []catalog.OpenAIFunction{{Name: "bing_bong", Description: "Do a bing bong",
			Parameters: object(nil, prop("foo", "string", ""))}}, 49},
		{"bing_bong two", cl100k, hello, []catalog.OpenAIFunction{{Name: "bing_bong", Description: "Do a bing bong",
			Parameters: object(nil, prop("foo", "string", ""), prop("bar", "number", "A number"))}}, 57},
		{"system", cl100k, []message{{"system", "Hello"}, {"user", "Hi there"}},
			[]catalog.OpenAIFunction{{Name: "do_stuff", Parameters: empty}}, 35},
		{"system colon", cl100k, []message{{"system", "Hello:"}, {"user", "Hi there"}},
			[]catalog.OpenAIFunction{{Name: "do_stuff", Parameters: empty}}, 35},
		{"two systems", cl100k, []message{{"system", "Hello:"}, {"system", "Hello"}, {"user", "Hi there"}},
			[]catalog.OpenAIFunction{{Name: "do_stuff", Parameters: empty}}, 40},
	}
	for _, tt := range tests {
		if got := promptTokens(t, tt.enc, tt.messages, tt.tools); got != tt.want {
			t.Errorf("%s: %d prompt tokens, OpenAI billed %d", tt.name, got, tt.want)
		}
	}
}

// TestRender pins the TypeScript of each kind of field, as the harmony
// renderer writes it.
func TestRender(t *testing.T) {
	three := int64(3)
	f := catalog.OpenAIFunction{
		Name:        "query",
		Description: "Query the forecast.\nTwo lines.",
		Parameters: &catalog.ObjectSchema{
			Type:        catalog.TypeList{"object"},
			Description: "A forecast query",
			Required:    []string{"city", "hours"},
			Properties: catalog.Properties{
				{Name: "city", Schema: &catalog.Schema{Type: catalog.TypeList{"string"}, Description: "City name", Examples: []any{"Berlin", 3}}},
				{Name: "days", Schema: &catalog.Schema{Type: catalog.TypeList{"integer"}, Description: "Days", Default: three, Minimum: new(float64)}},
				{Name: "unit", Schema: &catalog.Schema{Type: catalog.TypeList{"string"}, Enum: []any{"c", "f"}, Default: "c"}},
				{Name: "label", Schema: &catalog.Schema{Type: catalog.TypeList{"string"}, Default: "x"}},
				{Name: "hours", Schema: &catalog.Schema{Type: catalog.TypeList{"array"}, Items: &catalog.Schema{Type: catalog.TypeList{"integer"}}}},
				{Name: "tags", Schema: &catalog.Schema{Type: catalog.TypeList{"array"}, Items: &catalog.Schema{Type: catalog.TypeList{"string"}, Enum: []any{"a", "b"}}}},
				{Name: "note", Schema: &catalog.Schema{Type: catalog.TypeList{"string", "null"}, Enum: []any{"x", nil}}},
				{Name: "ok", Schema: &catalog.Schema{Type: catalog.TypeList{"boolean"}}},
			},
		},
	}
	var b strings.Builder
	renderOpenAI(&b, &f)
	want := `// Query the forecast.
// Two lines.
type query = (_: // A forecast query
{
// City name
// Examples:
// - "Berlin"
city: string,
// Days
days?: number, // default: 3
unit?: "c" | "f", // default: c
label?: string, // default: "x"
hours: number[],
tags?: "a" | "b"[],
note?: string | null,
ok?: boolean,
}) => any;

`
	if b.String() != want {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	renderOpenAI(&b, &catalog.OpenAIFunction{Name: "ping", Parameters: object(nil)})
	if want := "type ping = () => any;\n\n"; b.String() != want {
		t.Errorf("rendered %q, want %q", b.String(), want)
	}
}

// TestRenderRecord renders a record field as the harmony renderer renders
// an array of objects: the object's properties indented four spaces past
// the field, its closing brace too, then [].
func TestRenderRecord(t *testing.T) {
	f := catalog.OpenAIFunction{
		Name: "edit",
		Parameters: object([]string{"edits"}, catalog.Property{Name: "edits", Schema: &catalog.Schema{
			Type: catalog.TypeList{"array"}, Description: "Edits to apply",
			Items: &catalog.Schema{Type: catalog.TypeList{"object"}, Required: []string{"oldText"}, Properties: catalog.Properties{
				{Name: "oldText", Schema: &catalog.Schema{Type: catalog.TypeList{"string"}, Description: "Text to find", Examples: []any{"foo"}}},
				{Name: "count", Schema: &catalog.Schema{Type: catalog.TypeList{"integer"}, Default: int64(1)}},
			}},
		}}),
	}
	var b strings.Builder
	renderOpenAI(&b, &f)
	want := `type edit = (_: {
// Edits to apply
edits: {
    // Text to find
    // Examples:
    // - "foo"
    oldText: string,
    count?: number, // default: 1
    }[],
}) => any;

`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
