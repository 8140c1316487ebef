//go:build !serveonly

package main

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/tokens"
)

func runCheck(e env, args []string) error {
	fs := newFlags(e, "check")
	formatName := fs.String("format", "text", "output format: "+strings.Join(diag.FormatNames(), ", "))
	stats := fs.Bool("stats", false, "print what each tool's definition costs in tokens, per target (text format)")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	format, err := diag.ParseFormat(*formatName)
	if err != nil {
		return usageErr(err)
	}
	if *stats && format != diag.Text {
		return usagef("--stats prints a table, which --format %s has no room for", format)
	}
	l, err := lock.LoadIfExists(lock.FileName)
	if err != nil {
		return err
	}
	res, err := compiler.Compile(compiler.Config{Lock: l}, patterns...)
	if err != nil {
		return err
	}
	if err := diag.Print(e.stdout, format, res.Diagnostics, res.Source); err != nil {
		return err
	}
	if format == diag.Text {
		errs, warns := diag.Count(res.Diagnostics)
		acked := ""
		if n := diag.Acknowledged(res.Diagnostics); n > 0 {
			// Acknowledged warnings are not printed; the count says they
			// are there (--format json lists them, with their reasons).
			acked = fmt.Sprintf(" (%d acknowledged)", n)
		}
		fmt.Fprintf(e.stderr, "toolc check: %s, %s: %s, %s%s\n",
			plural(len(res.Packages), "package"), plural(len(res.Catalog.ToolNames()), "tool"), plural(errs, "error"), plural(warns, "warning"), acked)
		if len(res.Catalog.ToolNames()) > 0 && errs == 0 {
			costs, err := tokens.MeasureAll(res.Catalog, *stats)
			if err == nil && *stats {
				err = tokens.WriteTable(e.stdout, costs)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "toolc check: %s (--stats for each tool)\n", tokens.Summary(costs))
		}
	}
	if res.HasErrors() {
		return exitWith(exitFail)
	}
	return nil
}
