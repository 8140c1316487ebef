package tokens_test

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/tokens"
)

var examples = sync.OnceValues(func() (*catalog.Catalog, error) {
	res, err := compiler.Compile(compiler.Config{Dir: "../examples"}, "./...")
	if err != nil {
		return nil, err
	}
	return res.Catalog, nil
})

func examplesCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := examples()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMeasure: every target counts every tool once, the total is the
// fixed cost and the tools, and the counts are what the text is.
func TestMeasure(t *testing.T) {
	c := examplesCatalog(t)
	var want []string
	for s, tool := range c.Tools() {
		want = append(want, s.Name+"/"+tool.Name)
	}
	slices.Sort(want)
	costs, err := tokens.MeasureAll(c, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(costs) != 10 {
		t.Fatalf("%d costs, want 6 targets and 4 strict ones", len(costs))
	}
	for _, cost := range costs {
		var got []string
		sum := 0
		for _, tc := range cost.Tools {
			got = append(got, tc.Service+"/"+tc.Tool)
			if tc.Tokens <= 0 {
				t.Errorf("%s: %s/%s costs %d tokens", cost.Target, tc.Service, tc.Tool, tc.Tokens)
			}
			sum += tc.Tokens
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s counts the tools %v, want %v", cost.Target, got, want)
		}
		if cost.Total != cost.Fixed+sum {
			t.Errorf("%s: total %d, fixed %d and tools %d", cost.Target, cost.Total, cost.Fixed, sum)
		}
		one, err := tokens.Measure(c, cost.Target, cost.Strict)
		if err != nil {
			t.Fatal(err)
		}
		if one.Total != cost.Total || one.Estimate != cost.Estimate {
			t.Errorf("%s strict=%v: Measure %+v, MeasureAll %+v", cost.Target, cost.Strict, one, cost)
		}
		// Exact counts are the text's count.
		text, err := tokens.RequestText(c, cost.Target, cost.Strict)
		if err != nil {
			t.Fatal(err)
		}
		n := tokens.CountO200k(text)
		switch cost.Target {
		case catalog.OpenAIChat, catalog.OpenAIResponses:
			if cost.Total != n-1 {
				t.Errorf("%s: total %d, its text counts %d", cost.Target, cost.Total, n)
			}
		case catalog.MCP:
			// The array's brackets are no tool's.
			if cost.Total != n-2 {
				t.Errorf("%s: total %d, its text counts %d", cost.Target, cost.Total, n)
			}
		case catalog.Anthropic:
			if d := math.Abs(float64(cost.Total-cost.Fixed) - tokens.AnthropicPerO200k*float64(n)); d > float64(len(cost.Tools)) {
				t.Errorf("%s: tools %d, %.1f × %d tokens", cost.Target, cost.Total-cost.Fixed, tokens.AnthropicPerO200k, n)
			}
		}
	}
}

// TestMeasureLocal: a change to one tool changes what that tool costs,
// and no other tool's.
func TestMeasureLocal(t *testing.T) {
	before := twoTools("Look up a city's weather")
	after := twoTools("Look up a city's weather, with a much longer description that costs more tokens")
	for _, target := range catalog.Targets() {
		b, err := tokens.Measure(before, target, false)
		if err != nil {
			t.Fatal(err)
		}
		a, err := tokens.Measure(after, target, false)
		if err != nil {
			t.Fatal(err)
		}
		ab, _ := b.Tool("svc", "alpha")
		aa, _ := a.Tool("svc", "alpha")
		bb, _ := b.Tool("svc", "beta")
		ba, _ := a.Tool("svc", "beta")
		if ab.Tokens != aa.Tokens {
			t.Errorf("%s: alpha costs %d, then %d, when only beta changed", target, ab.Tokens, aa.Tokens)
		}
		if ba.Tokens <= bb.Tokens {
			t.Errorf("%s: beta costs %d, then %d, with a longer description", target, bb.Tokens, ba.Tokens)
		}
		if a.Total-b.Total != ba.Tokens-bb.Tokens {
			t.Errorf("%s: the total grew by %d, beta by %d", target, a.Total-b.Total, ba.Tokens-bb.Tokens)
		}
	}
	empty, err := tokens.Measure(&catalog.Catalog{}, catalog.Anthropic, false)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Total != 0 {
		t.Errorf("a request without tools costs %d", empty.Total)
	}
}

func twoTools(betaDescription string) *catalog.Catalog {
	city := &catalog.Field{Name: "city", Type: catalog.String, Description: "City name, e.g. Berlin", Required: true}
	return &catalog.Catalog{Services: []*catalog.Service{{
		Name: "svc", Version: "1.0.0", Description: "Two tools",
		Tools: []*catalog.Tool{
			{Name: "alpha", Description: "Say hello", Request: catalog.Message{Fields: []*catalog.Field{}}},
			{Name: "beta", Description: betaDescription, Request: catalog.Message{Fields: []*catalog.Field{city}}},
		},
	}}}
}

// TestPublishedAnthropicCount: the one tool definition whose Claude token
// count Anthropic publishes is the get_weather tool of its token-counting
// guide: 403 input tokens for it and the message "What's the weather like
// in San Francisco?" on Claude Opus 4. Less the tool-use system prompt
// (346 tokens for Opus 4 in the tool-use table of the time, 313 in
// today's) and the message (its 8 o200k_base tokens, and up to 7 of
// framing, as the guide's other example, 14 tokens for "You are a
// scientist" and "Hello, Claude", 7 tokens of text, implies), the tool
// took 42 to 82 tokens on Opus 4's tokenizer; Anthropic says the
// tokenizer of Opus 4.7 and later counts about 30% more, so 55 to 107 on
// it. The estimate must fall in that range: it is within 40% of either
// end, which is all the published figures allow to check.
func TestPublishedAnthropicCount(t *testing.T) {
	const tool = `{"name":"get_weather","description":"Get the current weather in a given location","input_schema":{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}},"required":["location"]}}`
	n := tokens.CountO200k(tool)
	est := int(math.Round(tokens.AnthropicPerO200k * float64(n)))
	lo, hi := int(math.Round(1.3*(403-346-15))), int(math.Round(1.3*(403-313-8)))
	if est < lo || est > hi {
		t.Errorf("get_weather: %d o200k_base tokens, estimated %d Claude tokens; the published count implies %d to %d", n, est, lo, hi)
	}
	t.Logf("get_weather: %d o200k_base tokens, estimated %d; published range %d to %d", n, est, lo, hi)
}

func TestReport(t *testing.T) {
	c := examplesCatalog(t)
	costs, err := tokens.MeasureAll(c, true)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tokens.WriteTable(&b, costs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !regexp.MustCompile(`^TOOL +openai +strict +anthropic +strict +gemini +bedrock +strict +mcp$`).MatchString(lines[0]) {
		t.Errorf("header %q", lines[0])
	}
	chat := costs[0]
	row := func(label string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, label+" ") {
				return strings.Join(strings.Fields(l)[len(strings.Fields(label)):], " ")
			}
		}
		t.Fatalf("no row %q in\n%s", label, b.String())
		return ""
	}
	tc := chat.Tools[0]
	if got := row(tc.Service + "/" + tc.Tool); !strings.HasPrefix(got, tokens.FormatInt(tc.Tokens)+" ") {
		t.Errorf("row of %s/%s: %q, want openai %d first", tc.Service, tc.Tool, got, tc.Tokens)
	}
	if got := row("per request"); !strings.HasPrefix(got, tokens.FormatInt(chat.Total)+" ") || !strings.Contains(got, " ~") {
		t.Errorf("per request: %q, want %d first and estimates marked ~", got, chat.Total)
	}
	if got := row("fixed"); got != "12 12 290 290 0 290 290 0" {
		t.Errorf("fixed: %q", got)
	}
	for _, target := range []string{"openai", "anthropic", "gemini", "bedrock", "mcp"} {
		if !strings.Contains(b.String(), "\n"+target+": ") {
			t.Errorf("no legend for %s:\n%s", target, b.String())
		}
	}
	sum := tokens.Summary(costs)
	if !regexp.MustCompile(`^tokens per request: openai [\d,]+, anthropic ~[\d,]+, gemini ~[\d,]+, bedrock ~[\d,]+, mcp [\d,]+$`).MatchString(sum) {
		t.Errorf("Summary = %q", sum)
	}
	if !strings.Contains(sum, "openai "+tokens.FormatInt(chat.Total)+",") {
		t.Errorf("Summary = %q, want openai %d", sum, chat.Total)
	}
}

func TestFormatInt(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1240: "1,240", 1234567: "1,234,567", -1240: "-1,240"} {
		if got := tokens.FormatInt(n); got != want {
			t.Errorf("FormatInt(%d) = %q, want %q", n, got, want)
		}
	}
}
