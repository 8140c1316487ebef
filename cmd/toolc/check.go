package main

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
)

func runCheck(e env, args []string) error {
	fs := newFlags(e, "check")
	formatName := fs.String("format", "text", "output format: "+strings.Join(diag.FormatNames(), ", "))
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	format, err := diag.ParseFormat(*formatName)
	if err != nil {
		return usageErr(err)
	}
	l, err := workingLock()
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
		fmt.Fprintf(e.stderr, "toolc check: %s, %s: %s, %s\n",
			plural(len(res.Packages), "package"), plural(len(res.Catalog.ToolNames()), "tool"), plural(errs, "error"), plural(warns, "warning"))
	}
	if res.HasErrors() {
		return exitWith(exitFail)
	}
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
