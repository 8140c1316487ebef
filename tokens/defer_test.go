package tokens_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/tokens"
)

// deferAllBut defers every tool of the catalog but the first n, in place.
func deferAllBut(c *catalog.Catalog, n int) {
	i := 0
	for _, t := range c.Tools() {
		t.Deferred = i >= n
		i++
	}
}

// TestMeasureDeferred: a deferred tool costs nothing in the targets that
// load it on demand, and the tools that reach it cost what they cost.
func TestMeasureDeferred(t *testing.T) {
	c := twoTools("Look up a city's weather")
	c.Services[0].Tools[1].Deferred = true
	costs, err := tokens.MeasureAll(c, false)
	if err != nil {
		t.Fatal(err)
	}
	names := func(cost *tokens.Cost) string {
		var s []string
		for _, tc := range cost.Tools {
			s = append(s, tc.Service+"/"+tc.Tool)
		}
		return strings.Join(s, " ")
	}
	want := map[catalog.Target]string{
		catalog.OpenAIChat:      "svc/alpha toolc/toolc_search_tools toolc/toolc_call_tool",
		catalog.OpenAIResponses: "svc/alpha svc/beta openai/tool_search",
		catalog.Anthropic:       "svc/alpha anthropic/tool_search_tool_bm25",
		catalog.Gemini:          "svc/alpha toolc/toolc_search_tools toolc/toolc_call_tool",
		catalog.Bedrock:         "svc/alpha toolc/toolc_search_tools toolc/toolc_call_tool",
		catalog.MCP:             "svc/svc_alpha toolc/toolc_search_tools",
	}
	for _, cost := range costs {
		got := names(cost)
		if cost.Target == catalog.MCP {
			got = strings.Replace(got, "svc/alpha", "svc/svc_alpha", 1)
		}
		if got != want[cost.Target] {
			t.Errorf("%s counts %q, want %q", cost.Target, got, want[cost.Target])
		}
	}
	if responses := costs[1]; !responses.Estimate {
		t.Error("openai-responses with deferred functions is not an estimate")
	}
	var b bytes.Buffer
	if err := tokens.WriteTable(&b, costs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "openai-chat  openai-responses") || !strings.Contains(b.String(), "svc/beta ") || !strings.Contains(b.String(), " - ") {
		t.Errorf("table:\n%s", b.String())
	}
	if s := tokens.Summary(costs); !strings.Contains(s, "openai-chat ") || !strings.Contains(s, "openai-responses ~") {
		t.Errorf("Summary = %q", s)
	}
}

// TestDeferralSavings measures what deferring all tools but one service's
// saves on every request of the bench corpus of 2,000 tools, and of the
// examples but their first five tools (BENCHMARKS.md).
func TestDeferralSavings(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a corpus of 2,000 tools")
	}
	dir := filepath.Join(t.TempDir(), "corpus")
	if _, err := corpus.Write(dir, corpus.ForTools(2000)); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cat  *catalog.Catalog
		keep int
	}{{"examples", ex, 5}, {"corpus", res.Catalog, corpus.DefaultToolsPerService}} {
		before, err := tokens.MeasureAll(tc.cat, false)
		if err != nil {
			t.Fatal(err)
		}
		deferAllBut(tc.cat, tc.keep)
		after, err := tokens.MeasureAll(tc.cat, false)
		deferAllBut(tc.cat, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		for i := range before {
			t.Logf("%s, all but %d tools deferred: %s %d → %d", tc.name, tc.keep, before[i].Target, before[i].Total, after[i].Total)
			if after[i].Total >= before[i].Total {
				t.Errorf("%s %s: %d tokens before deferral, %d after", tc.name, before[i].Target, before[i].Total, after[i].Total)
			}
		}
	}
}
