package main

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/tokens"
)

func runCheck(e env, args []string) int {
	fs := newFlags(e, "check")
	formatName := fs.String("format", "text", "output format: "+strings.Join(diag.FormatNames(), ", "))
	stats := fs.Bool("stats", false, "print what each tool's definition costs in tokens, per target (text format)")
	patterns, status, ok := parseFlags(fs, args)
	if !ok {
		return status
	}
	format, err := diag.ParseFormat(*formatName)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc check: %v\n", err)
		return exitUsage
	}
	l, status := workingLock(e, "check")
	if status != exitOK {
		return status
	}
	res, err := compiler.Compile(compiler.Config{Lock: l}, patterns...)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc check: %v\n", err)
		return exitUsage
	}
	if err := diag.Print(e.stdout, format, res.Diagnostics, res.Source); err != nil {
		fmt.Fprintf(e.stderr, "toolc check: %v\n", err)
		return exitUsage
	}
	if format == diag.Text {
		errs, warns := diag.Count(res.Diagnostics)
		tools := 0
		for _, s := range res.Catalog.Services {
			tools += len(s.Tools)
		}
		fmt.Fprintf(e.stderr, "toolc check: %s, %s: %s, %s\n",
			plural(len(res.Packages), "package"), plural(tools, "tool"), plural(errs, "error"), plural(warns, "warning"))
		if tools > 0 && errs == 0 {
			costs, err := tokens.MeasureAll(res.Catalog, *stats)
			if err == nil && *stats {
				err = tokens.WriteTable(e.stdout, costs)
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "toolc check: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(e.stderr, "toolc check: %s (--stats for each tool)\n", tokens.Summary(costs))
		}
	} else if *stats {
		fmt.Fprintf(e.stderr, "toolc check: --stats prints a table, which --format %s has no room for\n", format)
		return exitUsage
	}
	if res.HasErrors() {
		return exitFail
	}
	return exitOK
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
