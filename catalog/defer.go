package catalog

// Deferred loading: a tool marked Deferred is loaded on demand instead of
// in every request. Each projection says so in its provider's terms:
//
//   - anthropic: defer_loading on the deferred tools, and Anthropic's
//     tool search tool (BM25) in the request's tools;
//   - openai-responses: defer_loading on the deferred functions, each
//     group a namespace, and the tool_search tool;
//   - openai-chat, gemini, bedrock, which have no such mechanism: the
//     tools loaded up front, and two tools that toolc serves,
//     SearchToolName to find deferred tools and CallToolName to call one;
//   - mcp: the tools loaded up front and SearchToolName; a deferred tool
//     is called as any other, by its MCP name, with tools/call.
//
// A catalog without deferred tools projects as it did before.

// The tools that toolc serves to reach deferred tools, where a target has
// no deferred loading of its own. The group rule keeps their names free.
const (
	SearchToolName = "toolc_search_tools"
	CallToolName   = "toolc_call_tool"
)

// Anthropic's tool search tool: a server tool that searches the request's
// deferred tools with BM25, as toolc's own search does.
const (
	AnthropicToolSearchType = "tool_search_tool_bm25_20251119"
	AnthropicToolSearchName = "tool_search_tool_bm25"
)

// HasDeferred reports whether any tool of the catalog is deferred.
func (c *Catalog) HasDeferred() bool {
	for _, t := range c.Tools() {
		if t.Deferred {
			return true
		}
	}
	return false
}

// SearchTool is the tool that finds deferred tools: a query in words, and
// how many tools to return. Its result lists each tool's name, MCP name,
// description and input schema.
func SearchTool() *Tool {
	return &Tool{
		Name:        SearchToolName,
		MCPName:     SearchToolName,
		Description: "Search the tools that are not loaded yet, by what they do, and return the best matches with their names, descriptions and input schemas. Call it when none of the loaded tools fits, then call the tool found by its name.",
		Annotations: Annotations{ReadOnly: ptr(true), Idempotent: ptr(true), OpenWorld: ptr(false)},
		Request: Message{Fields: []*Field{
			{Name: "query", Type: String, Description: "What the tool should do, in a few words, such as \"refund an invoice\"", Required: true, MinLength: ptr(int64(1)), MaxLength: ptr(int64(500))},
			{Name: "limit", Type: Integer, Description: "How many tools to return at most", Default: int64(5), Minimum: ptr(1.0), Maximum: ptr(20.0)},
		}},
	}
}

// CallTool is the tool that calls a tool by name, for the targets whose
// requests cannot load a tool that a search found: the name, and the
// arguments as a JSON object in a string.
func CallTool() *Tool {
	return &Tool{
		Name:        CallToolName,
		MCPName:     CallToolName,
		Description: "Call a tool that " + SearchToolName + " found, by its name, with its arguments. The result is that tool's result.",
		Request: Message{Fields: []*Field{
			{Name: "name", Type: String, Description: "The name of the tool, as " + SearchToolName + " returned it", Required: true, MinLength: ptr(int64(1)), MaxLength: ptr(int64(256))},
			{Name: "arguments", Type: String, Description: "The tool's arguments: a JSON object that fits its input schema, such as {\"invoice_id\": \"in_1\"}", Default: "{}"},
		}},
	}
}

// toolcService is the service of the tools above, for projections.
var toolcService = &Service{Name: "toolc", Description: "The tools toolc serves"}

// loaded lists the tools that a target without deferred loading sends in
// every request: the catalog's tools loaded up front, then, when some are
// deferred, the tools that reach them (the search tool alone for MCP,
// whose tools/call calls any tool by name).
func (c *Catalog) loaded(mcp bool) []toolOf {
	var out []toolOf
	deferred := false
	for s, t := range c.Tools() {
		if t.Deferred {
			deferred = true
			continue
		}
		out = append(out, toolOf{s, t})
	}
	if deferred {
		out = append(out, toolOf{toolcService, SearchTool()})
		if !mcp {
			out = append(out, toolOf{toolcService, CallTool()})
		}
	}
	return out
}

// deferring reports whether a projection changes with deferred loading:
// some tool is deferred or in a group.
func (c *Catalog) deferring() bool {
	for _, t := range c.Tools() {
		if t.Deferred || t.Group != "" {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
