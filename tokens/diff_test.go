package tokens_test

import (
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/tokens"
)

func TestGrowth(t *testing.T) {
	before := twoTools("Look up a city's weather")
	same, err := tokens.Growth(before, twoTools("Look up a city's weather"))
	if err != nil || same != nil {
		t.Fatalf("Growth of equal catalogs = %v, %v; want nothing", same, err)
	}

	after := twoTools("Look up a city's weather, with a much longer description that costs more tokens")
	gamma := &catalog.Tool{Name: "gamma", Description: "A new tool", Request: catalog.Message{Fields: []*catalog.Field{}}, Pos: catalog.Pos{File: "svc/svc.cue", Line: 9, Column: 3}}
	after.Services[0].Tools = append(after.Services[0].Tools[1:], gamma) // alpha removed, gamma added
	changes, err := tokens.Growth(before, after)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{} // "" or tool → openai before, after
	for _, c := range changes {
		if c.Rule != tokens.GrowthRule || c.Breaking {
			t.Errorf("change %+v: want a compatible %s", c, tokens.GrowthRule)
		}
		if len(c.Tokens) != 5 || c.Tokens[0].Target != "openai" || c.Tokens[1].Target != "anthropic" || !c.Tokens[1].Estimate || c.Tokens[0].Estimate {
			t.Errorf("change %q: tokens %+v, want openai, anthropic (estimated), gemini, bedrock, mcp", c.Message, c.Tokens)
		}
		got[c.Tool] = []int{c.Tokens[0].Before, c.Tokens[0].After}
	}
	measure := func(c *catalog.Catalog) *tokens.Cost {
		cost, err := tokens.Measure(c, catalog.OpenAIChat, false)
		if err != nil {
			t.Fatal(err)
		}
		return cost
	}
	b, a := measure(before), measure(after)
	tool := func(c *tokens.Cost, name string) int { tc, _ := c.Tool("svc", name); return tc.Tokens }
	want := map[string][]int{
		"":      {b.Total, a.Total},
		"alpha": {tool(b, "alpha"), 0},
		"beta":  {tool(b, "beta"), tool(a, "beta")},
		"gamma": {0, tool(a, "gamma")},
	}
	for k, w := range want {
		if g := got[k]; len(g) != 2 || g[0] != w[0] || g[1] != w[1] {
			t.Errorf("%q: openai %v, want %v", k, g, w)
		}
	}
	if len(changes) != 4 || changes[0].Tool != "" {
		t.Fatalf("%d changes, the request's first; want the request's and 3 tools'", len(changes))
	}
	if !strings.HasPrefix(changes[0].Message, "+") && !strings.HasPrefix(changes[0].Message, "-") {
		t.Errorf("message %q", changes[0].Message)
	}
	for _, c := range changes[1:] {
		if c.Tool == "gamma" && c.Pos != gamma.Pos {
			t.Errorf("gamma's change at %v, want %v", c.Pos, gamma.Pos)
		}
		if !strings.HasPrefix(c.Message, `tool "`+c.Tool+`" of service "svc": `) {
			t.Errorf("message %q", c.Message)
		}
	}
	if m := changes[0].Message; !strings.Contains(m, " tokens on every openai request (") || !strings.Contains(m, "; about ") {
		t.Errorf("message %q", m)
	}
}
