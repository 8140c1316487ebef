package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolc/toolc/internal/atomicfile"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/gogen"
	"github.com/toolc/toolc/internal/inputfile"
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
		return &exitError{exitUsage, bareError("usage: toolc " + usageLine(fs) + "\n\ngo is the only generator: it writes the Go types and interface of each contract to " + gogen.FileName + " in its handler directory.")}
	}
	patterns, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	res, err := compiler.Compile(compiler.Config{}, patterns...)
	if err != nil {
		return err
	}
	if res.HasErrors() {
		// Warnings are toolc check's business; here they would only bury
		// the errors.
		var errs []diag.Diagnostic
		for _, d := range res.Diagnostics {
			if d.Severity == diag.Error {
				errs = append(errs, d)
			}
		}
		diag.Print(e.stderr, diag.Text, errs, res.Source)
		return failf("%s; nothing written", plural(len(errs), "error"))
	}
	files, err := generateGo(e, res.Catalog)
	if err != nil {
		return err
	}
	if *check {
		return checkGenerated(e, files)
	}
	return writeGenerated(e, files)
}

// genFile is a generated file and its path, relative to the working
// directory.
type genFile struct {
	path string
	src  []byte
}

// generateGo generates the Go file of every service, or none: a service
// whose names Go cannot use stops them all, with status 1.
func generateGo(e env, cat *catalog.Catalog) ([]genFile, error) {
	var (
		files   []genFile
		owner   = map[string]string{} // path → service
		nerrors int
	)
	for _, svc := range cat.Services {
		path := gogen.Path(svc)
		if other, ok := owner[path]; ok {
			fmt.Fprintf(e.stderr, "%s: error: services %s and %s have one handler directory, so both would generate %s\n",
				genPos(svc.Pos), other, svc.Name, path)
			nerrors++
			continue
		}
		owner[path] = svc.Name
		gen, err := gogen.Files(svc, ".")
		var gerrs gogen.Errors
		switch {
		case errors.As(err, &gerrs):
			for _, ge := range gerrs {
				fmt.Fprintf(e.stderr, "%s: error: %s\n", genPos(ge.Pos), ge.Message)
			}
			nerrors += len(gerrs)
			continue
		case err != nil:
			return nil, fmt.Errorf("the handler of %s: %v", svc.Name, err)
		}
		for _, f := range gen {
			if other, ok := owner[f.Path]; ok && other != svc.Name {
				fmt.Fprintf(e.stderr, "%s: error: services %s and %s would both generate %s\n", genPos(svc.Pos), other, svc.Name, f.Path)
				nerrors++
				continue
			}
			owner[f.Path] = svc.Name
			files = append(files, genFile{f.Path, f.Source})
		}
	}
	if nerrors > 0 {
		return nil, failf("%s; nothing written", plural(nerrors, "error"))
	}
	slices.SortFunc(files, func(a, b genFile) int { return strings.Compare(a.path, b.path) })
	return files, nil
}

// checkGenerated compares the files with what is on disk, and names the
// ones that differ.
func checkGenerated(e env, files []genFile) error {
	var stale []string
	for _, f := range files {
		old, err := inputfile.ReadFile(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, "\t"+f.path+" (missing)")
		case err != nil:
			return err
		case !bytes.Equal(old, f.src):
			stale = append(stale, "\t"+f.path+" (out of date)")
		}
	}
	if len(stale) > 0 {
		return failf("stale generated files; run toolc gen go (or go generate) to update them:\n%s", strings.Join(stale, "\n"))
	}
	fmt.Fprintf(e.stderr, "toolc gen go: %s up to date\n", plural(len(files), "file"))
	return nil
}

// writeGenerated writes the files that changed, each atomically; an
// unchanged file is left alone, so that watchers and builds see no edit.
func writeGenerated(e env, files []genFile) error {
	for _, f := range files {
		if old, err := inputfile.ReadFile(f.path); err == nil && bytes.Equal(old, f.src) {
			continue
		}
		if err := writeFileAtomic(f.path, f.src); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "toolc gen go: wrote %s\n", f.path)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it into place, so that no reader sees half a file.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(name, data)
}

// genPos formats a contract position as diagnostics do: file:line:col.
func genPos(p catalog.Pos) string {
	return diag.Position{File: p.File, Line: p.Line, Column: p.Column}.String()
}
