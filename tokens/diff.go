package tokens

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/lock"
)

// GrowthRule is the rule of the changes that Growth reports: what a
// request costs in tokens, before and after.
const GrowthRule = "token-growth"

// GrowthSince is Growth for toolc diff: it compares what the tools of
// patterns (relative to dir) cost per request, in the lock old and in now.
// A lock holds no examples and no strict marks, so against one both sides
// are counted as a lock records them.
func GrowthSince(old *lock.Lock, now *catalog.Catalog, dir string, patterns []string) ([]lock.Change, error) {
	in, _ := old.Split(dir, patterns)
	before, exact := in.Catalog()
	if !exact {
		now, _ = lock.FromCatalog(now).Strip().Catalog()
	}
	return Growth(before, now)
}

// Growth compares what two catalogs cost per request in each target (each
// tool with its own strict setting), and returns one change for every
// request, then one for each tool whose cost changed: added, removed or
// edited. None when nothing costs more or less. The changes are
// compatible (not breaking) and carry their counts in Tokens.
func Growth(old, new *catalog.Catalog) ([]lock.Change, error) {
	before, err := MeasureAll(old, false)
	if err != nil {
		return nil, err
	}
	after, err := MeasureAll(new, false)
	if err != nil {
		return nil, err
	}
	var targets []catalog.Target
	for _, c := range after {
		if c.Target != catalog.OpenAIResponses {
			targets = append(targets, c.Target)
		}
	}
	total := lock.Change{Rule: GrowthRule}
	changed := false
	for _, t := range targets {
		b, a := costOf(before, t), costOf(after, t)
		total.Tokens = append(total.Tokens, lock.TokenCount{Target: columnName(t), Before: b.Total, After: a.Total, Estimate: a.Estimate})
		changed = changed || b.Total != a.Total
	}
	if !changed {
		return nil, nil
	}
	total.Message = growthMessage("", total.Tokens)

	// The tools, in the new catalog's order, then the removed ones.
	type key struct{ service, tool string }
	pos := map[key]catalog.Pos{}
	var order []key
	for s, t := range new.Tools() {
		k := key{s.Name, t.Name}
		order = append(order, k)
		pos[k] = t.Pos
	}
	for s, t := range old.Tools() {
		if k := (key{s.Name, t.Name}); !hasKey(pos, k) {
			order = append(order, k)
		}
	}
	index := func(costs []*Cost, t catalog.Target) map[key]int {
		m := map[key]int{}
		for _, tc := range costOf(costs, t).Tools {
			m[key{tc.Service, tc.Tool}] = tc.Tokens
		}
		return m
	}
	b, a := map[catalog.Target]map[key]int{}, map[catalog.Target]map[key]int{}
	for _, t := range targets {
		b[t], a[t] = index(before, t), index(after, t)
	}
	changes := []lock.Change{total}
	for _, k := range order {
		c := lock.Change{Rule: GrowthRule, Service: k.service, Tool: k.tool, Pos: pos[k]}
		moved := false
		for _, t := range targets {
			bt, at := b[t][k], a[t][k]
			c.Tokens = append(c.Tokens, lock.TokenCount{Target: columnName(t), Before: bt, After: at, Estimate: costOf(after, t).Estimate})
			moved = moved || bt != at
		}
		if moved {
			c.Message = growthMessage(fmt.Sprintf("tool %q of service %q", k.tool, k.service), c.Tokens)
			changes = append(changes, c)
		}
	}
	return changes, nil
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

func costOf(costs []*Cost, t catalog.Target) *Cost {
	for _, c := range costs {
		if c.Target == t && !c.Strict {
			return c
		}
	}
	return &Cost{Target: t}
}

// growthMessage says what changed, for every request when what is empty:
//
//	+1,240 tokens on every openai request (3,682 → 4,922); about +1,810 on every anthropic request (7,159 → 8,969); ...
func growthMessage(what string, counts []lock.TokenCount) string {
	var parts []string
	for i, c := range counts {
		d := FormatInt(c.After - c.Before)
		if c.After >= c.Before {
			d = "+" + d
		}
		if c.Estimate {
			d = "about " + d
		}
		unit := " tokens"
		if i > 0 {
			unit = ""
		}
		parts = append(parts, fmt.Sprintf("%s%s on every %s request (%s → %s)", d, unit, c.Target, FormatInt(c.Before), FormatInt(c.After)))
	}
	msg := strings.Join(parts, "; ")
	if what != "" {
		msg = what + ": " + msg
	}
	return msg
}
