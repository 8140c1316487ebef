package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolc/toolc/internal/editdist"
)

// Select returns the sub-catalog holding only the named tools, by function
// name, as an allowlist for one provider request. Services without any of
// them are left out. An unknown name is an error, never silently ignored:
// a typo in an allowlist would otherwise hide a tool from the model. The
// error names the closest tools, not all of them.
func (c *Catalog) Select(names ...string) (*Catalog, error) {
	return c.selectTools(names, false)
}

// SelectFor is Select for an allowlist of the target's projection: for
// MCP, a name may be a tool's function name or the MCP name that clients
// see, as MCP users know the tools by it.
func (c *Catalog) SelectFor(target Target, names ...string) (*Catalog, error) {
	return c.selectTools(names, target == MCP)
}

func (c *Catalog) selectTools(names []string, mcp bool) (*Catalog, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := &Catalog{Services: []*Service{}}
	found := map[string]bool{}
	var known []string
	for _, s := range c.Services {
		var tools []*Tool
		for _, t := range s.Tools {
			known = append(known, t.Name)
			mcpName := ""
			if mcp {
				mcpName = t.ExposedMCPName(s.Name)
				known = append(known, mcpName)
			}
			if want[t.Name] || mcp && want[mcpName] {
				tools = append(tools, t)
				found[t.Name] = true
				found[mcpName] = mcp
			}
		}
		if len(tools) > 0 {
			cp := *s
			cp.Tools = tools
			out.Services = append(out.Services, &cp)
		}
	}
	var unknown []string
	for n := range want {
		if !found[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		known = slices.Compact(slices.Sorted(slices.Values(known)))
		var msgs []string
		for i, n := range unknown {
			if i == maxSuggested {
				// The suggestions cost a comparison with every tool each:
				// a list of thousands of unknown names cost seconds of CPU
				// and an answer of megabytes.
				msgs = append(msgs, fmt.Sprintf("and %d more unknown tools", len(unknown)-i))
				break
			}
			suggest := quoteAll(closest(n, known, 3))
			if len(n) > maxSuggestedName && len(known) > 0 {
				suggest = "none; no tool's name is that long"
			}
			msgs = append(msgs, fmt.Sprintf("unknown tool %s (closest: %s)", quoteName(n), suggest))
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	out.Seal()
	return out, nil
}

// maxSuggested bounds the unknown names of one selection that get
// suggestions, and are named, in its error.
const maxSuggested = 5

// maxSuggestedName bounds the length of a name that gets suggestions: a
// tool's name is at most 64 characters, and the edit distance costs the
// product of the lengths.
const maxSuggestedName = 256

// quoteName quotes a name for an error, cut to maxSuggestedName bytes.
func quoteName(name string) string {
	if len(name) <= maxSuggestedName {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%q... (%d bytes)", strings.ToValidUTF8(name[:maxSuggestedName], ""), len(name))
}

// closest returns up to n of names (sorted, each once), the nearest to
// name by edit distance first, then by name; none for a name longer than
// maxSuggestedName, which no tool's is.
func closest(name string, names []string, n int) []string {
	if len(name) > maxSuggestedName {
		return nil
	}
	type scored struct {
		name string
		d    int
	}
	var all []scored
	for _, c := range names {
		all = append(all, scored{c, editdist.Levenshtein(name, c)})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.d - b.d })
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].name)
	}
	return out
}

func quoteAll(names []string) string {
	if len(names) == 0 {
		return "the catalog has no tools"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// ToolNames returns the function names of every tool, sorted.
func (c *Catalog) ToolNames() []string {
	var names []string
	for _, s := range c.Services {
		for _, t := range s.Tools {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Tools calls yield for every tool with its service, in catalog order.
func (c *Catalog) Tools() func(yield func(*Service, *Tool) bool) {
	return func(yield func(*Service, *Tool) bool) {
		for _, s := range c.Services {
			for _, t := range s.Tools {
				if !yield(s, t) {
					return
				}
			}
		}
	}
}
