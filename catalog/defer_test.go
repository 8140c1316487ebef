package catalog_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// TestDeferredProjections: each target says deferred loading and groups
// in its provider's terms (see catalog/defer.go).
func TestDeferredProjections(t *testing.T) {
	c := deferredCatalog()
	loaded := []string{"ping", "find_products", catalog.SearchToolName, catalog.CallToolName}

	var chat []string
	for _, tl := range c.OpenAIChatTools(catalog.ProjectOptions{}) {
		chat = append(chat, tl.Function.Name)
	}
	if !slices.Equal(chat, loaded) {
		t.Errorf("openai-chat tools %v, want %v", chat, loaded)
	}
	var gemini []string
	for _, f := range c.GeminiTools()[0].FunctionDeclarations {
		gemini = append(gemini, f.Name)
	}
	if !slices.Equal(gemini, loaded) {
		t.Errorf("gemini declarations %v, want %v", gemini, loaded)
	}
	var bedrock []string
	for _, tl := range c.BedrockTools(catalog.ProjectOptions{}) {
		bedrock = append(bedrock, tl.ToolSpec.Name)
	}
	if !slices.Equal(bedrock, loaded) {
		t.Errorf("bedrock tools %v, want %v", bedrock, loaded)
	}

	// Responses: a namespace per group, where its first tool was; deferred
	// functions marked; tool_search last.
	resp, err := json.Marshal(c.OpenAIResponsesTools(catalog.ProjectOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var elems []struct {
		Type, Name, Description string
		DeferLoading            bool `json:"defer_loading"`
		Tools                   []struct {
			Type, Name   string
			DeferLoading bool `json:"defer_loading"`
		}
	}
	if err := json.Unmarshal(resp, &elems); err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, e := range elems {
		s := e.Type + ":" + e.Name
		if e.DeferLoading {
			s += "(deferred)"
		}
		for _, f := range e.Tools {
			s += " " + f.Name
			if f.DeferLoading {
				s += "(deferred)"
			}
		}
		shape = append(shape, s)
	}
	want := []string{"function:ping", "namespace:billing invoice(deferred) refund(deferred)", "namespace:catalog find_products price_history(deferred)", "function:archive(deferred)", "tool_search:"}
	if !slices.Equal(shape, want) {
		t.Errorf("openai-responses %v, want %v\n%s", shape, want, resp)
	}
	if !strings.Contains(string(resp), `{"type":"namespace","name":"billing","description":"Invoices and refunds","tools":[`) || strings.Contains(string(resp), `"parameters":null`) {
		t.Errorf("openai-responses namespace: %s", resp)
	}

	// Anthropic: every tool, deferred ones marked, the tool search tool last.
	var anth []string
	for _, tl := range c.AnthropicTools(catalog.ProjectOptions{}) {
		s := tl.Name
		if tl.DeferLoading {
			s += "(deferred)"
		}
		if tl.Type != "" {
			s = tl.Type + ":" + s
		}
		anth = append(anth, s)
	}
	wantAnth := []string{"ping", "invoice(deferred)", "find_products", "refund(deferred)", "price_history(deferred)", "archive(deferred)", catalog.AnthropicToolSearchType + ":" + catalog.AnthropicToolSearchName}
	if !slices.Equal(anth, wantAnth) {
		t.Errorf("anthropic %v, want %v", anth, wantAnth)
	}

	// MCP: tools/list holds the tools loaded up front and the search tool,
	// by name; the deferred ones are apart, marked, with their groups.
	var list []string
	for _, tl := range c.MCPTools() {
		list = append(list, tl.Name)
	}
	if want := []string{"shop_find_products", "shop_ping", catalog.SearchToolName}; !slices.Equal(list, want) {
		t.Errorf("mcp tools/list %v, want %v", list, want)
	}
	var deferred []string
	for _, tl := range c.MCPDeferredTools() {
		if tl.Meta == nil || !tl.Meta.DeferLoading {
			t.Errorf("mcp deferred tool %s has no %s", tl.Name, catalog.MCPDeferLoadingKey)
		}
		deferred = append(deferred, tl.Name)
	}
	if want := []string{"shop_archive", "shop_invoice", "shop_price_history", "shop_refund"}; !slices.Equal(deferred, want) {
		t.Errorf("mcp deferred %v, want %v", deferred, want)
	}
	for _, tl := range c.MCPTools() {
		if tl.Name == "shop_find_products" && (tl.Meta == nil || !slices.Equal(tl.Meta.Groups, []string{"catalog"}) || tl.Meta.DeferLoading) {
			t.Errorf("mcp find_products _meta %+v, want its group and no deferLoading", tl.Meta)
		}
	}

	// Without deferred tools, nothing is added; groups stay namespaces.
	for _, s := range c.Services {
		for _, tl := range s.Tools {
			tl.Deferred = false
		}
	}
	if n := len(c.OpenAIChatTools(catalog.ProjectOptions{})); n != 6 {
		t.Errorf("openai-chat without deferred tools: %d tools, want 6", n)
	}
	if n := len(c.OpenAIResponsesTools(catalog.ProjectOptions{})); n != 4 {
		t.Errorf("openai-responses without deferred tools: %d elements, want ping, billing, catalog, archive", n)
	}
}
