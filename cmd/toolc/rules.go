package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/toolc/toolc/compiler"
)

func runRules(e env, args []string) error {
	fs := newFlags(e, "rules")
	format := fs.String("format", "text", "output format: text, json or markdown")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	rules := compiler.Rules()
	switch *format {
	case "text":
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
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
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	case "markdown":
		_, err := fmt.Fprint(e.stdout, compiler.RulesMarkdown())
		return err
	}
	return usagef("unknown format %q (want text, json, markdown)", *format)
}
