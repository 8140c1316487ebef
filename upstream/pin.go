package upstream

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/lock"
)

// Rules of the changes that Compare reports beyond the lock's own (see
// lock.Kinds): a live tool that no contract can state, and two live
// tools that one contract key would name.
const (
	RuleInexpressible = "tool-inexpressible"
	RuleCollision     = "tool-name-collision"
)

// Compare holds the live tools of a service's upstream server to its
// contract, in the lock's change vocabulary, with the contract as the
// old side: a tool the server dropped is tool-removed, one it added
// tool-added, a changed description description-changed. Every change
// names the contract's tool (Tool) where there is one. The result is
// sorted as lock.Diff sorts it.
func Compare(svc *catalog.Service, live []*mcp.Tool) []lock.Change {
	byName := map[string]*mcp.Tool{}
	var changes []lock.Change
	dup := map[string]bool{}
	keys := map[string]string{} // contract key -> live name
	for _, t := range live {
		if t == nil {
			continue
		}
		if byName[t.Name] != nil {
			dup[t.Name] = true
		}
		byName[t.Name] = t
		if k, _, ok := ToolKey(t.Name); ok {
			if other, taken := keys[k]; taken && other != t.Name {
				dup[t.Name], dup[other] = true, true
			}
			keys[k] = t.Name
		}
	}
	declared := map[string]bool{}
	for _, ct := range svc.Tools {
		name := UpstreamName(ct)
		declared[name] = true
		lt := byName[name]
		switch {
		case lt == nil:
			changes = append(changes, change(svc, ct, "tool-removed", true, "tool %q is not among the server's tools any more", name))
		case dup[name]:
			changes = append(changes, change(svc, ct, RuleCollision, true, "the server lists %q more than once, or beside a tool whose name maps to the same contract key", name))
		default:
			changes = append(changes, compareTool(svc, ct, lt)...)
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		if !declared[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		changes = append(changes, lock.Change{Rule: "tool-added", Service: svc.Name, Tool: n,
			Message: fmt.Sprintf("the server has tool %q, which the contract does not declare; it is not served", truncate(n, 128))})
	}
	return changes
}

// compareTool compares one declared tool with its live definition.
func compareTool(svc *catalog.Service, ct *catalog.Tool, lt *mcp.Tool) []lock.Change {
	st := State(lt)
	if st.Tool == nil {
		return []lock.Change{change(svc, ct, RuleInexpressible, true, "the server's %q can no longer be stated by a contract: it needs %s", lt.Name, st.Missing)}
	}
	// The live tool takes the contract's names: a name the contract pins
	// is matched already, and its exposed MCP name is toolc's, not the
	// server's.
	live := *st.Tool
	live.Name, live.MCPName, live.Scopes, live.Pos = ct.Name, ct.MCPName, ct.Scopes, ct.Pos
	want := Normalize(ct)
	one := func(t *catalog.Tool) *lock.Lock {
		s := *svc
		s.Tools = []*catalog.Tool{t}
		return lock.FromCatalog(&catalog.Catalog{Services: []*catalog.Service{&s}})
	}
	changes := lock.Diff(one(want), one(&live))
	// The lock leaves out what reaches no model (positions, examples);
	// the MCP title and annotations it holds, and so compares.
	return changes
}

func change(svc *catalog.Service, ct *catalog.Tool, rule string, breaking bool, format string, args ...any) lock.Change {
	return lock.Change{Rule: rule, Breaking: breaking, Service: svc.Name, Tool: ct.Name, Pos: ct.Pos,
		Message: fmt.Sprintf(format, args...)}
}

// Summary is a change as one line for a log or a metric label: its rule
// and message, cut to n bytes.
func Summary(c lock.Change, n int) string {
	return truncate(c.Rule+": "+c.Message, n)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// byTool groups changes by the contract tool they concern; changes about
// tools the contract does not declare are left out.
func byTool(svc *catalog.Service, changes []lock.Change) map[string][]lock.Change {
	out := map[string][]lock.Change{}
	for _, c := range changes {
		if slices.ContainsFunc(svc.Tools, func(t *catalog.Tool) bool { return t.Name == c.Tool }) {
			out[c.Tool] = append(out[c.Tool], c)
		}
	}
	return out
}

// describe joins a tool's changes for a log line or a tool error.
func describe(changes []lock.Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = Summary(c, 300)
	}
	return strings.Join(parts, "; ")
}
