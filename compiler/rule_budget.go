package compiler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/tokens"
)

// tokenBudgetRule holds each service to its budget: budget.tokens caps,
// per target, the tokens that the service's tool definitions take in one
// request of that target, counted as toolc check counts them (package
// tokens), the fixed cost of a request with tools aside. It also checks
// the budget's shape: known targets, positive integers.
var tokenBudgetRule = &Rule{
	ID:       "token-budget",
	Doc:      "a service's tool definitions take no more tokens per request, in each target, than its budget.tokens allows",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			budget := s.root.get("budget")
			if budget == nil {
				continue
			}
			limits := budgetLimits(p, s, budget)
			if len(limits) == 0 {
				continue
			}
			cat := &catalog.Catalog{Services: []*catalog.Service{lowerer{wd: p.wd}.service(s.pkg)}}
			for _, l := range limits {
				cost, err := tokens.Measure(cat, l.target, false)
				if err != nil {
					p.reportf(l.node.pos, "cannot count the tokens of service %q for %s: %v", s.name(), l.target, err)
					continue
				}
				if used := cost.Total - cost.Fixed; used > l.limit {
					p.reportf(l.node.pos, "the tool definitions of service %q take %s tokens of every %s request, over its budget of %s%s; the largest: %s (toolc check --stats lists every tool)",
						s.name(), count(used, cost.Estimate), l.target, tokens.FormatInt(l.limit), estimated(cost.Estimate), largest(cost, 3))
				}
			}
		}
	},
}

type tokenLimit struct {
	target catalog.Target
	limit  int
	node   *node
}

// budgetLimits returns the service's valid token limits, and reports the
// ones that are not.
func budgetLimits(p *Pass, s service, budget *node) []tokenLimit {
	where := fmt.Sprintf("budget of service %q", s.name())
	if budget.kind != kStruct {
		p.reportf(budget.pos, "%s must be a struct such as {tokens: {anthropic: 4000}}, not %s", where, budget.kind)
		return nil
	}
	var limits []tokenLimit
	for _, k := range budget.fields {
		if k.label != "tokens" {
			p.reportf(k.pos, "unknown key %q in %s%s; it has tokens: {TARGET: N}", k.label, where, suggest(k.label, []string{"tokens"}))
			continue
		}
		if k.kind != kStruct {
			p.reportf(k.pos, "budget.tokens of service %q must be a struct of targets and token counts, such as {anthropic: 4000}, not %s", s.name(), k.kind)
			continue
		}
		targets := make([]string, len(catalog.Targets()))
		for i, t := range catalog.Targets() {
			targets[i] = string(t)
		}
		for _, t := range k.fields {
			target, err := catalog.ParseTarget(t.label)
			if err != nil {
				p.reportf(t.pos, "unknown target %q in budget.tokens of service %q%s; the targets are %s", t.label, s.name(), suggestTarget(t.label, targets), strings.Join(targets, ", "))
				continue
			}
			if t.kind != kInt || t.i <= 0 {
				p.reportf(t.pos, "the %s budget of service %q must be a positive whole number of tokens, not %s", target, s.name(), describeValue(t))
				continue
			}
			limits = append(limits, tokenLimit{target, int(t.i), t})
		}
	}
	return limits
}

// suggestTarget is suggest, which also knows that "openai" is two targets.
func suggestTarget(s string, targets []string) string {
	var prefixed []string
	for _, t := range targets {
		if strings.HasPrefix(t, strings.ToLower(s)+"-") {
			prefixed = append(prefixed, fmt.Sprintf("%q", t))
		}
	}
	if len(prefixed) > 0 {
		return " (did you mean " + strings.Join(prefixed, " or ") + "?)"
	}
	return suggest(s, targets)
}

func describeValue(n *node) string {
	switch n.kind {
	case kInt:
		return fmt.Sprint(n.i)
	case kFloat:
		return fmt.Sprint(n.f)
	case kString:
		return fmt.Sprintf("%q", n.str)
	}
	return n.kind.String()
}

func count(n int, estimate bool) string {
	if estimate {
		return "about " + tokens.FormatInt(n)
	}
	return tokens.FormatInt(n)
}

func estimated(estimate bool) string {
	if estimate {
		return " (an estimate: the provider publishes no tokenizer)"
	}
	return ""
}

// largest names the n tools that cost the most, with their tokens.
func largest(c *tokens.Cost, n int) string {
	tools := slices.Clone(c.Tools)
	slices.SortStableFunc(tools, func(a, b tokens.ToolCost) int { return b.Tokens - a.Tokens })
	var parts []string
	for _, t := range tools[:min(n, len(tools))] {
		parts = append(parts, fmt.Sprintf("%s %s", t.Tool, tokens.FormatInt(t.Tokens)))
	}
	return strings.Join(parts, ", ")
}
