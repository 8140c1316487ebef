package compiler

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// RuleFormats are the formats of WriteRules.
const RuleFormats = "text, json, markdown"

// WriteRules lists the rules that check applies, as `toolc rules` prints
// them: a table (text), a JSON array of {id, severity, doc}, or the
// README's Markdown table (RulesMarkdown).
func WriteRules(w io.Writer, format string) error {
	rules := Rules()
	switch format {
	case "text":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSEVERITY\tCHECKS")
		for _, r := range rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, r.Doc)
		}
		return tw.Flush()
	case "json":
		type rule struct {
			ID       string `json:"id"`
			Severity string `json:"severity"`
			Doc      string `json:"doc"`
		}
		out := make([]rule, len(rules))
		for i, r := range rules {
			out[i] = rule{r.ID, r.Severity.String(), r.Doc}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	case "markdown":
		_, err := io.WriteString(w, RulesMarkdown())
		return err
	}
	return fmt.Errorf("unknown format %q (want %s)", format, RuleFormats)
}
