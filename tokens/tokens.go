// Package tokens measures what a catalog's tool definitions cost: the
// tokens that each projection adds to every request of its provider, per
// tool and in total, counted as each provider bills them as closely as it
// publishes how.
//
//	costs, err := tokens.MeasureAll(cat, true) // every target, strict and not
//	tokens.WriteTable(os.Stdout, costs)        // a row per tool, a column per target
//
// How each target is counted (Method says it in a word):
//
//   - openai-chat, openai-responses: exact. OpenAI renders function tools as
//     TypeScript in the prompt (see render.go); toolc renders them the same
//     way and counts o200k_base tokens, with a tokenizer of its own on
//     tiktoken-go's vocabulary, which js-tiktoken's counts confirm. Fixed
//     is the namespace around the tools.
//   - anthropic, bedrock: estimated. Anthropic publishes no tokenizer for
//     its current models. toolc counts the o200k_base tokens of the tool's
//     JSON and multiplies them by AnthropicPerO200k. Fixed is the tool-use
//     system prompt that Anthropic publishes per model, for
//     AnthropicModel with tool_choice auto. Bedrock serves Claude the same
//     tool, so it costs the same.
//   - gemini: estimated as the o200k_base tokens of the function
//     declarations' JSON. Google publishes neither the tokenizer nor how
//     declarations reach the model, nor a fixed cost.
//   - mcp: the o200k_base tokens of the tools/list result's tools. A client
//     hands them to its own model in that model's format, so this is the
//     size of the listing, not a provider's bill.
package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolc/toolc/catalog"
)

// Cost is what one projection of a catalog adds to each request.
type Cost struct {
	Target catalog.Target
	// Strict says that every tool was projected strict; false means each
	// tool's own strict setting.
	Strict bool
	// Estimate says that the counts are estimates (see the package doc),
	// not counts of the provider's tokenizer.
	Estimate bool
	// Tools are the tools in the projection's order.
	Tools []ToolCost
	// Fixed is what a request pays for having tools at all, where the
	// provider publishes it.
	Fixed int
	// Total is Fixed and the tools' tokens: what every request of the
	// target pays for the catalog.
	Total int
}

// ToolCost is the tokens of one tool's definition.
type ToolCost struct {
	Service string
	Tool    string
	Tokens  int
}

// Tool returns the cost of the named tool of the named service, and
// whether the projection has it.
func (c *Cost) Tool(service, tool string) (ToolCost, bool) {
	for _, t := range c.Tools {
		if t.Service == service && t.Tool == tool {
			return t, true
		}
	}
	return ToolCost{}, false
}

// HasStrict reports whether a target has a strict mode, so that its
// strict projection differs from its default one.
func HasStrict(t catalog.Target) bool {
	switch t {
	case catalog.OpenAIChat, catalog.OpenAIResponses, catalog.Anthropic, catalog.Bedrock:
		return true
	}
	return false
}

// AnthropicPerO200k is the number of Claude tokens estimated for each
// o200k_base token of a tool's JSON. Anthropic's guidance is that tiktoken
// "undercounts Claude tokens by ~15–20% on typical text, and by much more
// on code" (the token-counting reference that Claude Code carries), for
// its current tokenizer, which Claude Opus 4.7 and later and Claude Sonnet
// 5 use; the one published count of a tool definition
// (TestPublishedAnthropicCount) puts it between 1.1 and 1.9 for that
// tokenizer. An estimate, then, to about a third either way: Anthropic's
// count_tokens endpoint gives the exact figure.
const AnthropicPerO200k = 1.2

// AnthropicModel is the model whose tool-use system prompt Fixed counts
// for anthropic and bedrock, and AnthropicToolUsePrompt its size with
// tool_choice auto or none, as Anthropic's tool-use overview publishes it
// (with any or tool it is 410). Other current models: Claude Sonnet 5 354,
// Claude Opus 4.7 675, Claude Opus 4.6 and Sonnet 4.6 497, Claude Opus 4.5,
// Sonnet 4.5 and Haiku 4.5 496.
const (
	AnthropicModel         = "Claude Opus 4.8"
	AnthropicToolUsePrompt = 290
)

// Method says in a few words how a target's tokens are counted.
func Method(t catalog.Target) string {
	switch t {
	case catalog.OpenAIChat, catalog.OpenAIResponses:
		return "o200k_base, of the TypeScript OpenAI renders"
	case catalog.Anthropic, catalog.Bedrock:
		return fmt.Sprintf("estimate: %.1f × o200k_base of the JSON; fixed: %s's tool-use prompt", AnthropicPerO200k, AnthropicModel)
	case catalog.Gemini:
		return "estimate: o200k_base of the JSON; no fixed cost published"
	case catalog.MCP:
		return "o200k_base of the tools/list JSON"
	}
	return ""
}

// MeasureAll returns the cost of every target with each tool's own strict
// setting, then, with strict, of every target that has a strict mode with
// all tools strict. It measures the targets at once, on as many CPUs as Go
// may use.
func MeasureAll(c *catalog.Catalog, strict bool) ([]*Cost, error) {
	type job struct {
		target catalog.Target
		strict bool
	}
	var jobs []job
	for _, s := range []bool{false, true} {
		for _, t := range catalog.Targets() {
			if !s || strict && HasStrict(t) {
				jobs = append(jobs, job{t, s})
			}
		}
	}
	// Without groups or deferred tools, both OpenAI APIs render the same
	// functions alike.
	same := true
	for _, t := range c.Tools() {
		same = same && t.Group == "" && !t.Deferred
	}
	out := make([]*Cost, len(jobs))
	errs := make([]error, len(jobs))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				if jobs[i].target == catalog.OpenAIResponses && same {
					continue // the same TypeScript as openai-chat's; see below
				}
				out[i], errs[i] = Measure(c, jobs[i].target, jobs[i].strict)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, j := range jobs {
		if j.target == catalog.OpenAIResponses && same {
			chat := out[slices.IndexFunc(jobs, func(k job) bool { return k.target == catalog.OpenAIChat && k.strict == j.strict })]
			cost := *chat
			cost.Target = catalog.OpenAIResponses
			cost.Tools = slices.Clone(chat.Tools)
			out[i] = &cost
		}
	}
	return out, nil
}

// Measure returns the cost of the catalog's projection to target, with
// every tool strict or with each tool's own setting.
func Measure(c *catalog.Catalog, target catalog.Target, strict bool) (*Cost, error) {
	t, factor, err := request(c, target, strict)
	if err != nil {
		return nil, err
	}
	cost := &Cost{Target: target, Strict: strict && HasStrict(target), Estimate: factor != exact}
	counts, fixed := t.count()
	ids := t.ids
	for i, n := range counts {
		ids[i].Tokens = estimate(n, factor)
		cost.Total += ids[i].Tokens
	}
	cost.Tools = ids
	switch target {
	case catalog.OpenAIChat, catalog.OpenAIResponses:
		cost.Fixed = max(0, fixed-openAIWrapperOverCount)
	case catalog.Anthropic, catalog.Bedrock:
		cost.Fixed = AnthropicToolUsePrompt
	}
	if len(cost.Tools) == 0 {
		// A request without tools pays no wrapper and no tool prompt.
		cost.Fixed = 0
	}
	cost.Total += cost.Fixed
	return cost, nil
}

// exact is the factor of a count that is not an estimate.
const exact = 0

// request returns the text of the target's tools in a request, and the
// factor that estimates the provider's tokens from its o200k_base count,
// or exact.
func request(c *catalog.Catalog, target catalog.Target, strict bool) (*text, float64, error) {
	opts := catalog.ProjectOptions{Strict: strict}
	t := &text{}
	factor := float64(exact)
	byName, byMCP := owners(c)
	var err error
	switch target {
	case catalog.OpenAIChat:
		v := c.OpenAIChatTools(opts)
		t.openAI(len(v), func(i int) *catalog.OpenAIFunction { return &v[i].Function }, byName)
	case catalog.OpenAIResponses:
		v := c.OpenAIResponsesTools(opts)
		t.responses(v, byName)
		if c.HasDeferred() {
			// What a model sees of a deferred function is OpenAI's to say,
			// and it says only "the name and description".
			factor = 1
		}
	case catalog.Anthropic:
		v := c.AnthropicTools(opts)
		factor = AnthropicPerO200k
		err = t.jsonArray("[", "]", len(v), func(i int) (any, ToolCost) {
			switch {
			case v[i].DeferLoading:
				return nil, ToolCost{} // loaded when a search finds it
			case v[i].Type != "":
				return v[i], ToolCost{Service: "anthropic", Tool: v[i].Name}
			}
			return v[i], byName(v[i].Name)
		})
	case catalog.Bedrock:
		// Bedrock hands Claude the tool as Anthropic's API takes it.
		v := c.BedrockTools(opts)
		factor = AnthropicPerO200k
		err = t.jsonArray("[", "]", len(v), func(i int) (any, ToolCost) {
			s := v[i].ToolSpec
			return catalog.AnthropicTool{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema.JSON, Strict: s.Strict}, byName(s.Name)
		})
	case catalog.Gemini:
		v := c.GeminiTools()
		factor = 1
		var decls []catalog.GeminiFunction
		if len(v) == 1 {
			decls = v[0].FunctionDeclarations
		}
		err = t.jsonArray(`[{"functionDeclarations":[`, "]}]", len(decls), func(i int) (any, ToolCost) { return decls[i], byName(decls[i].Name) })
	case catalog.MCP:
		v := c.MCPTools()
		err = t.jsonArray("[", "]", len(v), func(i int) (any, ToolCost) { return v[i], byMCP(v[i].Name) })
	default:
		if _, perr := catalog.ParseTarget(string(target)); perr != nil {
			return nil, 0, perr
		}
		return nil, 0, fmt.Errorf("tokens: no count for %s's projection", target)
	}
	if err != nil {
		return nil, 0, err
	}
	return t, factor, nil
}

// owners returns the tool of a function name and of an MCP name in a
// projection: the catalog's, or one that toolc adds (its search and call
// tools, of service "toolc").
func owners(c *catalog.Catalog) (byName, byMCP func(string) ToolCost) {
	names, mcp := map[string]ToolCost{}, map[string]ToolCost{}
	for s, t := range c.Tools() {
		id := ToolCost{Service: s.Name, Tool: t.Name}
		names[t.Name] = id
		mcp[t.ExposedMCPName(s.Name)] = id
	}
	lookup := func(m map[string]ToolCost) func(string) ToolCost {
		return func(name string) ToolCost {
			if id, ok := m[name]; ok {
				return id
			}
			return ToolCost{Service: "toolc", Tool: name}
		}
	}
	return lookup(names), lookup(mcp)
}

func estimate(n int, factor float64) int {
	if factor == exact || factor == 1 {
		return n
	}
	return int(math.Round(float64(n) * factor))
}

// text is the text that a request's tools become, with the span of each
// tool in it: a piece of the split that starts in a tool's span is that
// tool's; the rest (a wrapper, separators) is fixed.
type text struct {
	b     strings.Builder
	spans [][2]int
	ids   []ToolCost // the tool of each span
}

func (t *text) openAI(n int, fn func(int) *catalog.OpenAIFunction, owner func(name string) ToolCost) {
	t.b.WriteString(openAIHeader)
	for i := range n {
		f := fn(i)
		start := t.b.Len()
		renderOpenAI(&t.b, f)
		t.span(start, owner(f.Name))
	}
	t.b.WriteString(openAIFooter)
}

// responses renders the Responses API's tools: its functions in the
// functions namespace, then each namespace of its own. A deferred function
// is rendered as what OpenAI says a model sees of it before a search, its
// name and description, and so is a namespace whose functions are all
// deferred.
func (t *text) responses(tools []catalog.OpenAIResponsesTool, owner func(name string) ToolCost) {
	t.b.WriteString(openAIHeader)
	for i := range tools {
		if tools[i].Type == "function" {
			t.responsesFunction(&tools[i], owner)
		}
	}
	t.b.WriteString(openAIFooter)
	for _, ns := range tools {
		if ns.Type != "namespace" {
			continue
		}
		t.b.WriteString("\n\n## " + ns.Name + "\n\n")
		for line := range strings.Lines(ns.Description) {
			t.b.WriteString("// " + strings.TrimSuffix(line, "\n") + "\n")
		}
		t.b.WriteString("namespace " + ns.Name + " {\n\n")
		for i := range ns.Tools {
			t.responsesFunction(&ns.Tools[i], owner)
		}
		t.b.WriteString("} // namespace " + ns.Name)
	}
	for _, ts := range tools {
		if ts.Type == "tool_search" {
			start := t.b.Len()
			t.b.WriteString("\n\n## tool_search\n")
			t.span(start, ToolCost{Service: "openai", Tool: "tool_search"})
		}
	}
}

func (t *text) responsesFunction(f *catalog.OpenAIResponsesTool, owner func(name string) ToolCost) {
	start := t.b.Len()
	if f.DeferLoading {
		for line := range strings.Lines(f.Description) {
			t.b.WriteString("// " + strings.TrimSuffix(line, "\n") + "\n")
		}
		t.b.WriteString("type " + f.Name + ";\n\n")
	} else {
		renderOpenAI(&t.b, &f.OpenAIFunction)
	}
	t.span(start, owner(f.Name))
}

func (t *text) span(start int, id ToolCost) {
	t.spans = append(t.spans, [2]int{start, t.b.Len()})
	t.ids = append(t.ids, id)
}

// jsonArray writes the elements as the compact JSON that SDKs send,
// without escaping <, > and & as encoding/json does by default.
func (t *text) jsonArray(open, close string, n int, elem func(int) (any, ToolCost)) error {
	t.b.WriteString(open)
	for i := range n {
		v, id := elem(i)
		if v == nil {
			continue // not in the model's context
		}
		if len(t.spans) > 0 {
			t.b.WriteByte(',')
		}
		var j bytes.Buffer
		enc := json.NewEncoder(&j)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		start := t.b.Len()
		t.b.Write(bytes.TrimSuffix(j.Bytes(), []byte("\n")))
		t.span(start, id)
	}
	t.b.WriteString(close)
	return nil
}

// count returns the tokens of each tool's span, and those of the rest.
func (t *text) count() (tools []int, fixed int) {
	tools = make([]int, len(t.spans))
	i := 0
	o200kBase().each(t.b.String(), func(off, n int) {
		for i < len(t.spans) && off >= t.spans[i][1] {
			i++
		}
		if i < len(t.spans) && off >= t.spans[i][0] {
			tools[i] += n
		} else {
			fixed += n
		}
	})
	return tools, fixed
}
