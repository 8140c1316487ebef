package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"
)

// Target is a format that a catalog projects into: the value that goes in
// one provider request's tools field.
type Target string

const (
	OpenAIChat      Target = "openai-chat"
	OpenAIResponses Target = "openai-responses"
	Anthropic       Target = "anthropic"
	Gemini          Target = "gemini"
	Bedrock         Target = "bedrock"
	MCP             Target = "mcp"
)

// Targets lists every projection target.
func Targets() []Target {
	return []Target{OpenAIChat, OpenAIResponses, Anthropic, Gemini, Bedrock, MCP}
}

// ParseTarget parses a target name such as "openai-chat".
func ParseTarget(name string) (Target, error) {
	if slices.Contains(Targets(), Target(name)) {
		return Target(name), nil
	}
	return "", fmt.Errorf("unknown format %q (want %s)", name, TargetNames())
}

// TargetNames are the names of the targets, for messages:
// "openai-chat, openai-responses, ...".
func TargetNames() string {
	names := make([]string, 0, len(Targets()))
	for _, t := range Targets() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// ProjectOptions adjusts a projection.
type ProjectOptions struct {
	// Strict puts every tool in strict mode where the target has one
	// (OpenAI, Anthropic, Bedrock). Otherwise each tool's own strict
	// setting holds.
	Strict bool
}

// The projections below return the catalog's tools in one target's
// format, as Go values that encode to exactly what the provider's request
// takes: one method per target, each with its own type. Each is a pure
// function of the catalog. The values share some parts with each other and
// with the catalog (type lists, enum and example values): read them, do
// not modify them. ProjectJSON writes any target's projection as JSON.

// OpenAIChatTools is the catalog as a Chat Completions request's tools.
func (c *Catalog) OpenAIChatTools(opts ProjectOptions) []OpenAIChatTool {
	out := []OpenAIChatTool{}
	for _, e := range c.loaded(false) {
		out = append(out, OpenAIChatTool{Type: "function", Function: openAIFunction(e.t, opts, nil)})
	}
	return out
}

// OpenAIResponsesTools is the catalog as a Responses API request's tools.
//
// A group is a namespace, in the place of its first tool, and a deferred
// tool a function with defer_loading, with the tool_search tool last.
func (c *Catalog) OpenAIResponsesTools(opts ProjectOptions) []OpenAIResponsesTool {
	out := []OpenAIResponsesTool{}
	namespaces := map[string]int{} // group → index in out
	deferred := false
	for s, t := range c.Tools() {
		fn := OpenAIResponsesTool{Type: "function", OpenAIFunction: openAIFunction(t, opts, nil), DeferLoading: t.Deferred}
		deferred = deferred || t.Deferred
		g := s.Group(t.Group)
		if g == nil {
			out = append(out, fn)
			continue
		}
		i, ok := namespaces[g.Name]
		if !ok {
			i = len(out)
			namespaces[g.Name] = i
			out = append(out, OpenAIResponsesTool{Type: "namespace", OpenAIFunction: OpenAIFunction{Name: g.Name, Description: g.Description}})
		}
		out[i].Tools = append(out[i].Tools, fn)
	}
	if deferred {
		out = append(out, OpenAIResponsesTool{Type: "tool_search"})
	}
	return out
}

// AnthropicTools is the catalog as a Messages request's tools.
//
// A deferred tool has defer_loading, with Anthropic's tool search tool
// last.
func (c *Catalog) AnthropicTools(opts ProjectOptions) []AnthropicTool {
	out := []AnthropicTool{}
	deferred := false
	for _, t := range c.Tools() {
		out = append(out, anthropicTool(t, opts, nil))
		deferred = deferred || t.Deferred
	}
	if deferred {
		out = append(out, AnthropicTool{Type: AnthropicToolSearchType, Name: AnthropicToolSearchName})
	}
	return out
}

// GeminiTools is the catalog as a generateContent request's tools: one
// tool that declares every function. Gemini has no strict mode.
func (c *Catalog) GeminiTools() []GeminiTool {
	decls := []GeminiFunction{}
	for _, e := range c.loaded(false) {
		decls = append(decls, geminiFunction(e.t, nil))
	}
	return []GeminiTool{{FunctionDeclarations: decls}}
}

// BedrockTools is the catalog as a Converse request's toolConfig.tools.
func (c *Catalog) BedrockTools(opts ProjectOptions) []BedrockTool {
	out := []BedrockTool{}
	for _, e := range c.loaded(false) {
		out = append(out, bedrockTool(e.t, opts, nil))
	}
	return out
}

// MCPTools is the catalog as the tools of a tools/list result, in its
// order (by MCP name): the tools loaded up front, and the search tool
// when some are deferred (see MCPDeferredTools).
func (c *Catalog) MCPTools() []MCPTool {
	out := []MCPTool{}
	for _, e := range c.mcpOrder() {
		out = append(out, mcpTool(e.s, e.t, nil))
	}
	return out
}

// ProjectJSON returns target's projection encoded as indented JSON:
// exactly what encoding/json writes for the value of the target's typed
// projection (OpenAIChatTools, …, MCPTools), with SetIndent("", "  ")
// and SetEscapeHTML(false). It writes each tool as soon as it is
// projected, so that it allocates little more than its output. A large
// catalog is written in two halves at once when there are two CPUs or
// more.
func (c *Catalog) ProjectJSON(target Target, opts ProjectOptions) ([]byte, error) {
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	if c.deferring() {
		// Namespaces, deferred tools and the tools that reach them: the
		// typed projection, encoded.
		return c.projectJSONTyped(target, opts)
	}
	var tools []toolOf
	if target == MCP {
		tools = c.mcpOrder()
	} else {
		for s, t := range c.Tools() {
			tools = append(tools, toolOf{s, t})
		}
	}
	// With two CPUs or more, the second half of a large catalog is
	// written at once, by a writer of its own at the same depth whose
	// first tool follows one (first is false), into the same buffer at
	// the size the first half is estimated to take; then the gap between
	// the halves is closed. A half that outgrows its room moves to a
	// buffer of its own, and is appended.
	split := len(tools)
	if len(tools) >= parallelTools && runtime.GOMAXPROCS(0) > 1 {
		split = len(tools) / 2
	}
	headRoom := 4096 + toolsSize(tools[:split], target == MCP)
	buf := make([]byte, 0, headRoom+toolsSize(tools[split:], target == MCP))
	w := &writer{indent: true, b: buf[:0:headRoom]}
	if target == Gemini {
		w.open('[')
		w.next()
		w.open('{')
		w.key("functionDeclarations")
	}
	w.open('[')
	var rest *writer
	done := make(chan struct{})
	if split < len(tools) {
		rest = &writer{indent: true, depth: w.depth, b: buf[headRoom:headRoom]}
		go func() {
			defer close(done)
			rest.projectTools(target, opts, tools[split:])
		}()
	}
	w.projectTools(target, opts, tools[:split])
	if rest != nil {
		<-done
		n := len(w.b)
		if unsafe.SliceData(w.b) == unsafe.SliceData(buf) && headRoom < cap(buf) && unsafe.SliceData(rest.b) == &buf[:cap(buf)][headRoom] {
			w.b = buf[:n+copy(buf[n:cap(buf)], rest.b)]
		} else {
			w.b = append(w.b, rest.b...)
		}
		w.fail(rest.err)
	}
	w.close(']')
	if target == Gemini {
		w.close('}')
		w.close(']')
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '\n'), nil
}

// parallelTools is the size from which ProjectJSON writes a catalog in two
// halves at once: a few hundred microseconds of work, against a few
// microseconds to start a goroutine and copy its half.
const parallelTools = 128

type toolOf struct {
	s *Service
	t *Tool
}

// projectTools writes tools as elements of the array being written.
func (w *writer) projectTools(target Target, opts ProjectOptions, tools []toolOf) {
	ob := &objects{}
	for _, e := range tools {
		w.next()
		switch target {
		case OpenAIChat:
			w.openAIChatTool(&OpenAIChatTool{Type: "function", Function: openAIFunction(e.t, opts, ob)})
		case OpenAIResponses:
			w.openAIResponsesTool(&OpenAIResponsesTool{Type: "function", OpenAIFunction: openAIFunction(e.t, opts, ob)})
		case Anthropic:
			t := anthropicTool(e.t, opts, ob)
			w.anthropicTool(&t)
		case Gemini:
			t := geminiFunction(e.t, ob)
			w.geminiFunction(&t)
		case Bedrock:
			t := bedrockTool(e.t, opts, ob)
			w.bedrockTool(&t)
		case MCP:
			t := mcpTool(e.s, e.t, ob)
			w.mcpTool(&t)
		}
	}
}

// objects makes the object schemas of a projection. The typed
// projections get a new object for each (a nil *objects); ProjectJSON reuses two scratch
// objects, one for a request and one for a response, because it writes
// each tool before it projects the next.
type objects struct {
	scratch  [2]ObjectSchema
	dialects [2]dialect
}

func (ob *objects) object(slot int, d dialect, m *Message) *ObjectSchema {
	if ob == nil {
		return d.object(m)
	}
	o := &ob.scratch[slot]
	d.fill(o, m, &ob.dialects[slot])
	return o
}

// OpenAI: https://platform.openai.com/docs/guides/function-calling. In
// strict mode every property is required, optional ones admit null, and
// objects are closed; strict mode lacks defaults, string lengths,
// uniqueItems and some formats. The API rejects a function description
// over 1024 characters ("Invalid 'tools[26].function.description': string
// too long. Expected a string with maximum length 1024"), so the
// projection cuts it and provider-limit warns; it documents no limit on
// the descriptions of properties, which are never cut.
const openAIMaxDescription = 1024

var openAIStrictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

func openAIDialect(strict bool) dialect {
	d := dialect{has: all, closed: true, maxDescription: openAIMaxDescription}
	if strict {
		d.allRequired, d.jsonAsString = true, true
		d.has = func(key string, f *Field) bool {
			switch key {
			case "default", "minLength", "maxLength", "uniqueItems", "examples":
				return false
			case "format":
				return slices.Contains(openAIStrictFormats, f.Format)
			}
			return true
		}
	}
	return d
}

// OpenAIFunction is a function tool's definition.
type OpenAIFunction struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Parameters  *ObjectSchema `json:"parameters"`
	Strict      bool          `json:"strict"`
}

// OpenAIChatTool is one element of a Chat Completions request's tools.
type OpenAIChatTool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIResponsesTool is one element of a Responses API request's tools.
//
// Its Type is "function" (an OpenAIFunction), "namespace" (a group: Name,
// Description and its functions, Tools) or "tool_search".
type OpenAIResponsesTool struct {
	Type string `json:"type"`
	OpenAIFunction
	// DeferLoading, on a function, loads it on demand, through
	// tool_search.
	DeferLoading bool `json:"defer_loading,omitempty"`
	// Tools are a namespace's functions.
	Tools []OpenAIResponsesTool `json:"tools,omitempty"`
}

// MarshalJSON writes each type of tool with its own keys.
func (t OpenAIResponsesTool) MarshalJSON() ([]byte, error) {
	w := &writer{}
	w.openAIResponsesTool(&t)
	return w.b, w.err
}

func openAIFunction(t *Tool, opts ProjectOptions, ob *objects) OpenAIFunction {
	strict := opts.Strict || t.Strict
	d := openAIDialect(strict)
	return OpenAIFunction{
		Name:        t.Name,
		Description: d.cut(t.modelDescription()),
		Parameters:  ob.object(0, d, &t.Request),
		Strict:      strict,
	}
}

// Anthropic: https://docs.anthropic.com/en/docs/build-with-claude/tool-use.
// Strict tools take no numeric or length bounds, no pattern, and minItems
// only up to 1.
var anthropicStrictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

func anthropicDialect(strict bool) dialect {
	d := dialect{has: all, closed: true}
	if strict {
		// Strict tools close every object, as OpenAI's do: a JSON field
		// is a string that holds it.
		d.jsonAsString = true
		d.has = func(key string, f *Field) bool {
			switch key {
			case "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxItems", "uniqueItems", "examples":
				return false
			case "minItems":
				return *f.MinItems <= 1
			case "format":
				return slices.Contains(anthropicStrictFormats, f.Format)
			}
			return true
		}
	}
	return d
}

// AnthropicTool is one element of a Messages request's tools.
//
// A tool of the Anthropic's, such as its tool search tool, has a Type and
// a Name only.
type AnthropicTool struct {
	Type          string           `json:"type,omitempty"`
	Name          string           `json:"name"`
	Description   string           `json:"description,omitempty"`
	InputSchema   *ObjectSchema    `json:"input_schema,omitempty"`
	Strict        bool             `json:"strict,omitempty"`
	InputExamples []map[string]any `json:"input_examples,omitempty"`
	// DeferLoading loads the tool on demand, through the tool search
	// tool.
	DeferLoading bool `json:"defer_loading,omitempty"`
}

func anthropicTool(t *Tool, opts ProjectOptions, ob *objects) AnthropicTool {
	strict := opts.Strict || t.Strict
	return AnthropicTool{
		DeferLoading:  t.Deferred,
		Name:          t.Name,
		Description:   t.modelDescription(),
		InputSchema:   ob.object(0, anthropicDialect(strict), &t.Request),
		Strict:        strict,
		InputExamples: t.Examples,
	}
}

// Gemini: https://ai.google.dev/api/caching#Schema, an OpenAPI 3.0 subset.
// No additionalProperties, exclusive bounds or uniqueItems; enums only on
// strings; string formats only date-time and enum; optional fields are
// nullable.
var geminiDialect = dialect{
	nullable:      true,
	ordered:       true,
	upperTypes:    true,
	singleExample: true,
	// Gemini's Schema has no type for any value, and rejects an OBJECT
	// without properties.
	jsonAsString: true,
	has: func(key string, f *Field) bool {
		switch key {
		case "exclusiveMinimum", "exclusiveMaximum", "uniqueItems":
			return false
		case "enum":
			return f.Type == String || f.Type == Array && f.Items == String
		case "format":
			return f.Format == "date-time"
		}
		return true
	},
}

// GeminiTool is one element of a generateContent request's tools.
type GeminiTool struct {
	FunctionDeclarations []GeminiFunction `json:"functionDeclarations"`
}

// GeminiFunction is one function declaration. A function without
// parameters leaves them out: Gemini rejects an object with no properties.
type GeminiFunction struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Parameters  *ObjectSchema `json:"parameters,omitempty"`
}

func geminiFunction(t *Tool, ob *objects) GeminiFunction {
	fn := GeminiFunction{Name: t.Name, Description: t.modelDescription()}
	if len(t.Request.Fields) > 0 {
		fn.Parameters = ob.object(0, geminiDialect, &t.Request)
	}
	return fn
}

// Bedrock: the Converse API's toolConfig.tools, with JSON Schema inputs.
// A ToolSpecification takes strict: true ("Strict tool use",
// https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html),
// which constrains the model's tool input to the schema; Bedrock serves it
// for Anthropic's models, and its schema subset is taken to be Anthropic's
// strict one.
func bedrockDialect(strict bool) dialect {
	if strict {
		return anthropicDialect(true)
	}
	return dialect{has: all, closed: true}
}

// BedrockTool is one element of a Converse request's toolConfig.tools.
type BedrockTool struct {
	ToolSpec BedrockToolSpec `json:"toolSpec"`
}

// BedrockToolSpec describes one tool.
type BedrockToolSpec struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	InputSchema BedrockInputSchema `json:"inputSchema"`
	Strict      bool               `json:"strict,omitempty"`
}

// BedrockInputSchema wraps the JSON Schema.
type BedrockInputSchema struct {
	JSON *ObjectSchema `json:"json"`
}

func bedrockTool(t *Tool, opts ProjectOptions, ob *objects) BedrockTool {
	strict := opts.Strict || t.Strict
	return BedrockTool{ToolSpec: BedrockToolSpec{
		Name:        t.Name,
		Description: t.modelDescription(),
		InputSchema: BedrockInputSchema{JSON: ob.object(0, bedrockDialect(strict), &t.Request)},
		Strict:      strict,
	}}
}

// dialectOf returns the dialect of target's projection of a tool that is
// strict or not.
func dialectOf(target Target, strict bool) dialect {
	switch target {
	case OpenAIChat, OpenAIResponses:
		return openAIDialect(strict)
	case Anthropic:
		return anthropicDialect(strict)
	case Gemini:
		return geminiDialect
	case Bedrock:
		return bedrockDialect(strict)
	}
	return mcpDialect
}

// MCP: the tools of a tools/list result, with JSON Schema 2020-12 input
// and output schemas. The tools and their keys are in the order, and the
// annotations in the form, that go-sdk's tools/list sends (its mcp.Tool
// and mcp.ToolAnnotations, tools sorted by name), so that the export and
// the live list are the same bytes.
var mcpDialect = dialect{has: all, closed: true, mcpHeaders: true}

// MCPTool is one tool of a tools/list result.
type MCPTool struct {
	Meta         *MCPMeta        `json:"_meta,omitempty"`
	Annotations  *MCPAnnotations `json:"annotations,omitempty"`
	Description  string          `json:"description,omitempty"`
	Execution    *MCPExecution   `json:"execution,omitempty"`
	InputSchema  *ObjectSchema   `json:"inputSchema"`
	Name         string          `json:"name"`
	OutputSchema *ObjectSchema   `json:"outputSchema,omitempty"`
	Title        string          `json:"title,omitempty"`
}

// MCPMeta is the _meta of a tool. MCP defines no key for the scopes a tool
// needs (SEP-1880 proposed one and was closed), so toolc uses a key under
// its own reverse-DNS prefix, as MCP asks of _meta keys.
type MCPMeta struct {
	// Groups are the groups the tool is in, under the key of the MCP
	// proposal for groups (SEP-2084, a draft), which clients that filter
	// tools by group read.
	Groups []string `json:"io.modelcontextprotocol/groups,omitempty"`
	// Scopes are the OAuth scopes a caller's token must hold to call the
	// tool, so that a client can ask for them up front.
	Scopes []string `json:"io.toolc/scopes,omitempty"`
	// DeferLoading marks a deferred tool, which tools/list leaves out:
	// the search tool returns it, and a client that loads tools on demand
	// (an Anthropic request's defer_loading) may use it.
	DeferLoading bool `json:"io.toolc/deferLoading,omitempty"`
}

// The _meta keys of MCPMeta.Groups and MCPMeta.DeferLoading.
const (
	MCPGroupsKey       = "io.modelcontextprotocol/groups"
	MCPDeferLoadingKey = "io.toolc/deferLoading"
)

// MCPExecution is a tool's execution, as MCP's Tool carries it since
// 2025-11-25: whether the tool runs as a task. The Tasks extension
// (io.modelcontextprotocol/tasks, MCP 2026-07-28) defines no tool-level
// key of its own, so a contract's task reaches clients here.
type MCPExecution struct {
	// TaskSupport is TaskOptional or TaskRequired.
	TaskSupport string `json:"taskSupport"`
}

// MCPScopesKey is the _meta key of MCPMeta.Scopes.
const MCPScopesKey = "io.toolc/scopes"

// MCPAnnotations are MCP's behaviour hints. readOnlyHint and
// idempotentHint are always sent, as go-sdk sends them: false is what MCP
// defines an absent hint to mean.
type MCPAnnotations struct {
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	Title           string `json:"title,omitempty"`
}

func mcpTool(s *Service, t *Tool, ob *objects) MCPTool {
	tool := MCPTool{
		Name:        t.ExposedMCPName(s.Name),
		Title:       t.Title,
		Description: t.modelDescription(),
		InputSchema: ob.object(0, mcpDialect, &t.Request),
	}
	if t.Response != nil {
		tool.OutputSchema = ob.object(1, mcpDialect, t.Response)
	}
	if len(t.Scopes) > 0 || t.Group != "" || t.Deferred {
		tool.Meta = &MCPMeta{Scopes: t.Scopes, DeferLoading: t.Deferred}
		if t.Group != "" {
			tool.Meta.Groups = []string{t.Group}
		}
	}
	if t.Task != "" {
		tool.Execution = &MCPExecution{TaskSupport: t.Task}
	}
	if a := t.Annotations; a != (Annotations{}) {
		tool.Annotations = &MCPAnnotations{
			DestructiveHint: a.Destructive,
			IdempotentHint:  a.Idempotent != nil && *a.Idempotent,
			OpenWorldHint:   a.OpenWorld,
			ReadOnlyHint:    a.ReadOnly != nil && *a.ReadOnly,
		}
	}
	return tool
}

// mcpOrder lists the tools of tools/list in its order: by MCP name.
func (c *Catalog) mcpOrder() []toolOf {
	tools := c.loaded(true)
	slices.SortStableFunc(tools, func(a, b toolOf) int {
		return strings.Compare(a.t.ExposedMCPName(a.s.Name), b.t.ExposedMCPName(b.s.Name))
	})
	return tools
}

// MCPDeferredTools are the deferred tools in MCP's form, by MCP name:
// those that tools/list leaves out, but tools/call calls and the search
// tool returns.
func (c *Catalog) MCPDeferredTools() []MCPTool {
	var tools []toolOf
	for s, t := range c.Tools() {
		if t.Deferred {
			tools = append(tools, toolOf{s, t})
		}
	}
	slices.SortStableFunc(tools, func(a, b toolOf) int {
		return strings.Compare(a.t.ExposedMCPName(a.s.Name), b.t.ExposedMCPName(b.s.Name))
	})
	out := []MCPTool{}
	for _, e := range tools {
		out = append(out, mcpTool(e.s, e.t, nil))
	}
	return out
}

// projectJSONTyped is ProjectJSON by encoding/json over the typed
// projection: for a catalog with groups or deferred tools, whose
// projections are not one element per tool.
func (c *Catalog) projectJSONTyped(target Target, opts ProjectOptions) ([]byte, error) {
	var v any
	switch target {
	case OpenAIChat:
		v = c.OpenAIChatTools(opts)
	case OpenAIResponses:
		v = c.OpenAIResponsesTools(opts)
	case Anthropic:
		v = c.AnthropicTools(opts)
	case Gemini:
		v = c.GeminiTools()
	case Bedrock:
		v = c.BedrockTools(opts)
	case MCP:
		v = c.MCPTools()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// modelDescription is the tool description a model reads: deprecation
// first, so that a model prefers the replacement.
func (t *Tool) modelDescription() string {
	if t.Deprecated {
		return markDeprecated(t.Description)
	}
	return t.Description
}

// markDeprecated starts a description with "Deprecated. ", unless it
// already starts by saying so ("Deprecated: use x instead").
func markDeprecated(desc string) string {
	if saysDeprecated(desc) {
		return desc
	}
	return deprecatedMark + desc
}

const deprecatedMark = "Deprecated. "

func saysDeprecated(desc string) bool {
	return len(desc) >= len("deprecated") && strings.EqualFold(desc[:len("deprecated")], "deprecated")
}
