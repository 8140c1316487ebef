package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/toolc/toolc/compiler"
)

func runRules(e env, args []string) int {
	fs := newFlags(e, "rules")
	format := fs.String("format", "text", "output format: text, json or markdown")
	rest, status, ok := parseFlags(fs, args)
	if !ok {
		return status
	}
	if len(rest) > 0 {
		fmt.Fprintln(e.stderr, "usage: toolc "+usageLine(fs))
		return exitUsage
	}
	rules := compiler.Rules()
	switch *format {
	case "text":
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSEVERITY\tCHECKS")
		for _, r := range rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, r.Doc)
		}
		tw.Flush()
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
		enc.Encode(out)
	case "markdown":
		fmt.Fprint(e.stdout, compiler.RulesMarkdown())
	default:
		fmt.Fprintf(e.stderr, "toolc rules: unknown format %q (want text, json, markdown)\n", *format)
		return exitUsage
	}
	return exitOK
}
