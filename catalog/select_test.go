package catalog_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// allExamples compiles every example into one catalog.
func allExamples(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := compileDir(repoRoot, "./examples/...")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Services) < 2 {
		t.Skipf("Select needs two services; the examples have %d", len(c.Services))
	}
	return c
}

func TestSelect(t *testing.T) {
	all := allExamples(t)
	before := marshal(t, all)
	first, last := all.Services[0], all.Services[len(all.Services)-1]
	want := []string{last.Tools[0].Name, first.Tools[0].Name}

	sub, err := all.Select(want...)
	if err != nil {
		t.Fatal(err)
	}
	if got := sub.ToolNames(); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("selected %v, want %v", got, want)
	}
	if len(sub.Services) != 2 || sub.Services[0].Name != first.Name || sub.Services[1].Name != last.Name {
		t.Errorf("services %v: want only %s and %s, in catalog order", serviceNames(sub), first.Name, last.Name)
	}
	if sub.Fingerprint == "" || sub.Fingerprint == all.Fingerprint {
		t.Errorf("the sub-catalog is not sealed on its own: %q", sub.Fingerprint)
	}
	if sub.Services[0].Tools[0].Fingerprint != first.Tools[0].Fingerprint {
		t.Error("selecting a tool changed its fingerprint")
	}
	if !bytes.Equal(marshal(t, all), before) {
		t.Error("Select changed the catalog it selected from")
	}
	// The projection of a selection is the selected elements of the whole
	// projection.
	for _, target := range catalog.Targets() {
		got := project(sub, target, catalog.ProjectOptions{})
		whole := project(all, target, catalog.ProjectOptions{})
		if n, m := elems(got), elems(whole); n != 2 || m != len(all.ToolNames()) {
			t.Errorf("%s: %d of %d elements, want 2 of %d", target, n, m, len(all.ToolNames()))
		}
	}

	t.Run("one service", func(t *testing.T) {
		sub, err := all.Select(first.Tools[0].Name, first.Tools[0].Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(sub.Services) != 1 || len(sub.Services[0].Tools) != 1 {
			t.Errorf("a duplicated name: %v, %v", serviceNames(sub), sub.ToolNames())
		}
	})

	t.Run("every tool", func(t *testing.T) {
		sub, err := all.Select(all.ToolNames()...)
		if err != nil {
			t.Fatal(err)
		}
		if sub.Fingerprint != all.Fingerprint || !bytes.Equal(marshal(t, sub), marshal(t, all)) {
			t.Error("selecting every tool is not the whole catalog")
		}
	})

	t.Run("nothing", func(t *testing.T) {
		sub, err := all.Select()
		if err != nil || len(sub.Services) != 0 {
			t.Errorf("Select() = %v, %v; want an empty catalog", serviceNames(sub), err)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		sub, err := all.Select(first.Tools[0].Name, "zz_nope", "aa_nope")
		if err == nil {
			t.Fatalf("Select with unknown names = %v", sub.ToolNames())
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, `unknown tool "aa_nope" (closest: `) || !strings.Contains(msg, `; unknown tool "zz_nope" (closest: `) {
			t.Errorf("error %q does not name the unknown names, sorted", msg)
		}
		if n := strings.Count(msg, `", "`); n != 4 {
			t.Errorf("error %q lists %d+2 names; want the 3 closest for each, not the whole catalog", msg, n)
		}
		// A near miss names the tool it missed first.
		near := first.Tools[0].Name
		_, err = all.Select(near + "x")
		if want := fmt.Sprintf(`unknown tool %q (closest: %q, `, near+"x", near); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Select(%q) = %v, want %s...", near+"x", err, want)
		}
		if sub != nil {
			t.Error("Select returned a catalog with its error")
		}
	})
}

// TestSelectForMCP: an MCP allowlist takes MCP names as well as function
// names; Select takes function names only.
func TestSelectForMCP(t *testing.T) {
	all := allExamples(t)
	s := all.Services[0]
	mcpName := s.Tools[0].ExposedMCPName(s.Name)
	if mcpName == s.Tools[0].Name {
		t.Skip("the first tool's MCP name is its function name")
	}
	sub, err := all.SelectFor(catalog.MCP, mcpName, all.Services[1].Tools[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := sub.ToolNames(); len(got) != 2 {
		t.Errorf("SelectFor(MCP) selected %v", got)
	}
	if _, err := all.Select(mcpName); err == nil {
		t.Errorf("Select(%q) takes an MCP name", mcpName)
	}
	if _, err := all.SelectFor(catalog.MCP, mcpName+"x"); err == nil || !strings.Contains(err.Error(), `(closest: "`+mcpName+`"`) {
		t.Errorf("SelectFor(MCP, %q) = %v, want the MCP name closest", mcpName+"x", err)
	}
}

func serviceNames(c *catalog.Catalog) []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, s := range c.Services {
		names = append(names, s.Name)
	}
	return names
}

// elems counts the tools in a projection.
func elems(v any) int {
	switch x := v.(type) {
	case []catalog.OpenAIChatTool:
		return len(x)
	case []catalog.OpenAIResponsesTool:
		return len(x)
	case []catalog.AnthropicTool:
		return len(x)
	case []catalog.GeminiTool:
		return len(x[0].FunctionDeclarations)
	case []catalog.BedrockTool:
		return len(x)
	case []catalog.MCPTool:
		return len(x)
	}
	return -1
}
