//go:build !serveonly

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/gogen"
)

// runGen runs a code generator; go is the only one.
func runGen(e env, args []string) error {
	fs := newFlags(e, "gen")
	check := fs.Bool("check", false, "write nothing; exit 1 naming the generated files that are missing or out of date")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fs.Usage()
		return nil
	}
	if len(args) == 0 || args[0] != "go" {
		return &exitError{Status: exitUsage, Err: bareError("usage: toolc " + usageLine(fs) + "\n\ngo is the only generator: it writes the Go types and interface of each contract to " + gogen.FileName + " in its handler directory.")}
	}
	patterns, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	res, err := compiler.Compile(compiler.Config{}, patterns...)
	if err != nil {
		return err
	}
	// Warnings are toolc check's business; here they would only bury the
	// errors.
	errs, _ := diag.Split(res.Diagnostics)
	var files []gogen.File
	if len(errs) == 0 {
		// Names that Go cannot use are errors of the same kind.
		files, err = gogen.Catalog(res.Catalog)
		var names diag.List
		if errors.As(err, &names) {
			errs = names
		} else if err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		diag.Print(e.stderr, diag.Text, errs, res.Source)
		return failf("%s; nothing written", plural(len(errs), "error"))
	}
	if *check {
		stale, err := gogen.Stale(files)
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			return failf("stale generated files; run toolc gen go (or go generate) to update them:\n\t%s", strings.Join(stale, "\n\t"))
		}
		fmt.Fprintf(e.stderr, "toolc gen go: %s up to date\n", plural(len(files), "file"))
		return nil
	}
	written, err := gogen.Update(files)
	for _, f := range written {
		fmt.Fprintf(e.stderr, "toolc gen go: wrote %s\n", f)
	}
	return err
}
