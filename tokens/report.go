package tokens

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolc/toolc/catalog"
)

// Summary returns one line of the totals per request of the costs with
// each tool's own strict setting, such as
//
//	tokens per request: openai 1,240, anthropic ~1,810, gemini ~1,022, bedrock ~1,750, mcp 2,100
//
// where "openai" stands for openai-chat and openai-responses, which cost
// the same, and "~" marks an estimate.
func Summary(costs []*Cost) string {
	var parts []string
	split := false
	for _, c := range costs {
		split = split || c.Target == catalog.OpenAIResponses && !c.Strict && !sameAsChat(c, costs)
	}
	for _, c := range costs {
		if c.Strict || c.Target == catalog.OpenAIResponses && !split {
			continue
		}
		name := columnName(c.Target)
		if split {
			name = string(c.Target)
		}
		parts = append(parts, name+" "+formatCount(c.Total, c.Estimate))
	}
	return "tokens per request: " + strings.Join(parts, ", ")
}

// WriteTable writes the costs as a table: a row per tool, then the tools'
// sum, the fixed cost and the total per request; a column per target, with
// the strict projection beside the default one. A legend says how each
// column was counted.
func WriteTable(w io.Writer, costs []*Cost) error {
	var cols []*Cost
	for _, c := range costs {
		if c.Target != catalog.OpenAIResponses || !sameAsChat(c, costs) {
			cols = append(cols, c)
		}
	}
	// Each target's strict column beside its default one.
	ordered := make([]*Cost, 0, len(cols))
	for _, c := range cols {
		if c.Strict {
			continue
		}
		ordered = append(ordered, c)
		for _, s := range cols {
			if s.Strict && s.Target == c.Target {
				ordered = append(ordered, s)
			}
		}
	}
	if len(ordered) == 0 {
		return nil
	}
	var rows [][]string
	row := func(label string, cells []string) {
		rows = append(rows, append([]string{label}, cells...))
	}
	split := slices.ContainsFunc(ordered, func(c *Cost) bool { return c.Target == catalog.OpenAIResponses })
	head := make([]string, len(ordered))
	for i, c := range ordered {
		head[i] = columnName(c.Target)
		if split && (c.Target == catalog.OpenAIChat || c.Target == catalog.OpenAIResponses) {
			head[i] = string(c.Target)
		}
		if c.Strict {
			head[i] = "strict"
		}
	}
	row("TOOL", head)
	// The tools in the first column's order, which is the catalog's
	// unless that column is mcp's.
	index := make([]map[[2]string]int, len(ordered))
	for i, c := range ordered {
		index[i] = make(map[[2]string]int, len(c.Tools))
		for _, t := range c.Tools {
			index[i][[2]string{t.Service, t.Tool}] = t.Tokens
		}
	}
	// A row for every tool of any column, in the order they first
	// appear: a deferred tool is in no request of some targets ("-").
	var rowsOf [][2]string
	seenRow := map[[2]string]bool{}
	for _, c := range ordered {
		for _, t := range c.Tools {
			if k := [2]string{t.Service, t.Tool}; !seenRow[k] {
				seenRow[k] = true
				rowsOf = append(rowsOf, k)
			}
		}
	}
	for _, k := range rowsOf {
		cells := make([]string, len(ordered))
		for i, c := range ordered {
			cells[i] = "-"
			if n, ok := index[i][k]; ok {
				cells[i] = formatCount(n, c.Estimate)
			}
		}
		row(k[0]+"/"+k[1], cells)
	}
	sum := func(label string, value func(*Cost) int) {
		cells := make([]string, len(ordered))
		for i, c := range ordered {
			cells[i] = formatCount(value(c), c.Estimate)
		}
		row(label, cells)
	}
	sum("tools", func(c *Cost) int { return c.Total - c.Fixed })
	fixed := make([]string, len(ordered))
	for i, c := range ordered {
		// Published, or derived from a published format: not estimated.
		fixed[i] = FormatInt(c.Fixed)
	}
	row("fixed", fixed)
	sum("per request", func(c *Cost) int { return c.Total })
	if err := writeColumns(w, rows); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nopenai is openai-chat and openai-responses, which OpenAI renders alike; strict: every tool strict; ~: an estimate.")
	seen := map[string]bool{}
	for _, c := range ordered {
		name := columnName(c.Target)
		if seen[name] {
			continue
		}
		seen[name] = true
		_, err := fmt.Fprintf(w, "%s: %s\n", name, Method(c.Target))
		if err != nil {
			return err
		}
	}
	return nil
}

// writeColumns writes rows as columns two spaces apart: the first
// aligned left, the numbers right.
func writeColumns(w io.Writer, rows [][]string) error {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, cell := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sameAsChat reports whether a cost of openai-responses is that of
// openai-chat with the same strictness, tool for tool: true unless groups
// or deferred tools make the two APIs' requests differ.
func sameAsChat(r *Cost, costs []*Cost) bool {
	for _, c := range costs {
		if c.Target == catalog.OpenAIChat && c.Strict == r.Strict {
			return c.Total == r.Total && slices.Equal(c.Tools, r.Tools)
		}
	}
	return false
}

func columnName(t catalog.Target) string {
	if t == catalog.OpenAIChat || t == catalog.OpenAIResponses {
		return "openai"
	}
	return string(t)
}

// formatCount writes n with commas between thousands, and a "~" before an
// estimate.
func formatCount(n int, estimate bool) string {
	s := FormatInt(n)
	if estimate {
		return "~" + s
	}
	return s
}

// FormatInt writes n with commas between thousands: 1,240.
func FormatInt(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
