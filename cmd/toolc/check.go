package main

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
)

func runCheck(e env, args []string) int {
	fs := newFlags(e, "check")
	formatName := fs.String("format", "text", "output format: "+strings.Join(diag.FormatNames(), ", "))
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
