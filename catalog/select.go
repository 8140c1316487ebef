package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// Select returns the sub-catalog holding only the named tools, by function
// name, as an allowlist for one provider request. Services without any of
// them are left out. An unknown name is an error, never silently ignored:
// a typo in an allowlist would otherwise hide a tool from the model.
func (c *Catalog) Select(names ...string) (*Catalog, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := &Catalog{Services: []*Service{}}
	found := map[string]bool{}
	for _, s := range c.Services {
		var tools []*Tool
		for _, t := range s.Tools {
			if want[t.Name] {
				tools = append(tools, t)
				found[t.Name] = true
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
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("unknown tool %s; the catalog has %s", strings.Join(unknown, ", "), strings.Join(c.ToolNames(), ", "))
	}
	out.Seal()
	return out, nil
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
