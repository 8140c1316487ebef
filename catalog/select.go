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
		var msgs []string
		for _, n := range unknown {
			msgs = append(msgs, fmt.Sprintf("unknown tool %q (closest: %s)", n, quoteAll(closest(n, known, 3))))
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	out.Seal()
	return out, nil
}

// closest returns up to n of names, the nearest to name by edit distance
// first, then by name.
func closest(name string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	var all []scored
	for _, c := range slices.Compact(slices.Sorted(slices.Values(names))) {
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
