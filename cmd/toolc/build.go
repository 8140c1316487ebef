//go:build !serveonly

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/cliflag"
	"github.com/toolc/toolc/lock"
)

const defaultCatalogFile = "toolc.catalog.json"

func runBuild(e env, args []string) error {
	fs := newFlags(e, "build")
	out := fs.String("o", defaultCatalogFile, "write the catalog to `FILE`")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	l, err := lock.LoadIfExists(lock.FileName)
	if err != nil {
		return err
	}
	cat, err := compileWith(e, "build", compiler.Config{Lock: l}, patterns)
	if err != nil {
		return err
	}
	// The services' directories, relative to the catalog file, let it
	// find its handlers wherever it is used from.
	if err := cat.Rebase(".", filepath.Dir(*out)); err != nil {
		return err
	}
	// -o may name a directory that does not exist yet (dist/catalog.json
	// in a clean checkout): make it, once the contracts compiled, so that
	// a failed build creates nothing. The file itself is still written to
	// a temporary name beside it and renamed.
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := cat.WriteFile(*out); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "toolc build: wrote %s: %s, %s\n", *out, plural(len(cat.Services), "service"), plural(len(cat.ToolNames()), "tool"))
	return nil
}

func runExport(e env, args []string) error {
	fs := newFlags(e, "export")
	format := fs.String("format", "", "projection: "+catalog.TargetNames())
	strict := fs.Bool("strict", false, "put every tool in strict mode where the provider has one")
	tools := fs.String("tools", "", "export only these tools: comma-separated function names (or MCP names, with --format mcp)")
	catalogFile := fs.String("catalog", "", "read a catalog built by toolc build instead of compiling contracts")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *format == "" {
		return usagef("--format is required (%s)", catalog.TargetNames())
	}
	target, err := catalog.ParseTarget(*format)
	if err != nil {
		return usageErr(err)
	}
	// The warnings are about the target being printed, in the mode it is
	// printed in: what this projection drops or reshapes, no other's.
	cfg := compiler.Config{Targets: []catalog.Target{target}, Strict: *strict}
	cat, err := loadCatalogWith(e, "export", cfg, *catalogFile, patterns)
	if err != nil {
		return err
	}
	if *tools != "" {
		if cat, err = cat.SelectFor(target, cliflag.List(*tools)...); err != nil {
			return usagef("--tools: %v", err)
		}
	}
	data, err := cat.ProjectJSON(target, catalog.ProjectOptions{Strict: *strict})
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(data)
	return err
}

// loadCatalog reads a catalog file when one is named, and compiles the
// patterns otherwise; naming both is a usage error.
func loadCatalog(e env, cmd, file string, patterns []string) (*catalog.Catalog, error) {
	return loadCatalogWith(e, cmd, compiler.Config{}, file, patterns)
}

// loadCatalogWith is loadCatalog with a configuration for the compiler.
func loadCatalogWith(e env, cmd string, cfg compiler.Config, file string, patterns []string) (*catalog.Catalog, error) {
	if file == "" {
		return compileWith(e, cmd, cfg, patterns)
	}
	if len(patterns) > 0 {
		return nil, usagef("give --catalog or patterns, not both")
	}
	return catalog.LoadFile(file)
}

// compileWith compiles contracts, printing diagnostics to stderr (stdout
// carries the command's output). Errors stop the command with status 1;
// warnings do not.
func compileWith(e env, cmd string, cfg compiler.Config, patterns []string) (*catalog.Catalog, error) {
	res, err := compiler.Compile(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	if cfg.Targets != nil {
		// The warnings are about the projection being printed: what it
		// drops or moves, which toolc check, warning about every target
		// in each tool's own mode, does not say. They are shown in full.
		_, warns := diag.Split(res.Diagnostics)
		diag.Print(e.stderr, diag.Text, warns, res.Source)
		res.Diagnostics, _ = diag.Split(res.Diagnostics)
	}
	if err := reportErrors(e, cmd, res); err != nil {
		return nil, err
	}
	return res.Catalog, nil
}

// reportErrors prints a compile's errors in full, and its warnings as one
// line that points at toolc check: every start of serve, dev or lock
// would otherwise repeat them all. With errors, it returns the error that
// says nothing was written.
func reportErrors(e env, cmd string, res *compiler.Result) error {
	errs, warns := diag.Split(res.Diagnostics)
	diag.Print(e.stderr, diag.Text, errs, res.Source)
	if s := diag.WarningSummary(warns); s != "" {
		fmt.Fprintf(e.stderr, "toolc %s: %s\n", cmd, s)
	}
	if len(errs) > 0 {
		return failf("%s; nothing written", plural(len(errs), "error"))
	}
	return nil
}
