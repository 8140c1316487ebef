package compiler

import (
	"errors"
	"go/build"
	"path/filepath"
	"strings"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/inputfile"
)

// handlerRule checks that a service's handler directory, when it holds Go
// code, holds a main package: toolc builds the handler with go build and
// runs the result as a plugin, and go build of any other package makes no
// program (toolc serve used to fail with "permission denied" on it).
// A directory with no Go code is left alone: a contract may be compiled
// for its projections alone, and toolc serve says that the handler is
// missing.
//
// It warns rather than fails: a library package beside its contract is
// right for a service that runs the generated Handlers in process
// (runtime.Local), which toolc gen go supports, and only toolc serve, call
// and dev need a main package, and say so themselves when they meet one
// that is not.
var handlerRule = &Rule{
	ID:       "handler",
	Doc:      "the handler directory (the contract's, or the one handler: names) holds a Go main package, if it holds Go code",
	Severity: diag.Warning,
	Check: func(p *Pass) {
		for s := range p.services() {
			if s.root.get("upstream") != nil {
				continue // an upstream MCP server serves the tools
			}
			h := s.root.get("handler")
			rel := "."
			if h != nil {
				if h.kind != kString || strings.TrimSpace(h.str) == "" {
					continue // the schema rule reports it
				}
				rel = h.str
			}
			dir := filepath.Join(s.pkg.Dir, filepath.FromSlash(rel))
			name := handlerPackage(dir)
			if name == "" || name == "main" {
				continue
			}
			if h != nil {
				p.reportf(h.pos, "handler %q holds Go package %s, not a main package: toolc builds the handler into a program and runs it; point handler: at a main package whose main calls Serve (toolc serve and dev cannot run it; a service that embeds the catalog and runs its Handlers in process can)", rel, name)
			} else {
				p.reportf(s.root.pos, "the contract's directory holds Go package %s, which toolc would build as the service's handler, but a handler must be a main package: make it package main with a main that calls Serve, or set handler: to the directory of one (toolc serve and dev cannot run it; a service that embeds the catalog and runs its Handlers in process can)", name)
			}
		}
	},
}

// handlerPackage returns the name of the Go package in dir that go build
// would build for the current platform, or "" when there is none (no Go
// files, or a directory that does not exist) or it cannot tell (files of
// several packages, which go build reports itself).
func handlerPackage(dir string) string {
	ctxt := build.Default
	ctxt.OpenFile = inputfile.GoBuildOpen // never blocks on a FIFO named x.go
	pkg, err := ctxt.ImportDir(dir, 0)
	var none *build.NoGoError
	if err != nil && (errors.As(err, &none) || pkg == nil || pkg.Name == "") {
		return ""
	}
	var multi *build.MultiplePackageError
	if errors.As(err, &multi) {
		return ""
	}
	return pkg.Name
}
