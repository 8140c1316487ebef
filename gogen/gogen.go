// Package gogen generates the Go side of a toolc contract, the way
// protoc-gen-go does for protobuf: Generate turns one catalog.Service into
// the source of a Go file (FileName, in the service's handler directory)
// that holds
//
//   - a request struct per tool, and a response struct where the tool has
//     response fields, with the contract's field names as json tags;
//   - a named type with constants for each enum;
//   - the interface Tools, with one method per tool;
//   - Handlers(impl), which turns an implementation into the handlers that
//     rpc.Serve and runtime.Local take;
//   - in a main package, Serve(impl), which serves them as the service's
//     handler plugin. A library package gets no Serve: it would link the
//     plugin protocol (go-plugin, gRPC) into every program that imports
//     the library, such as a service that runs the Handlers in process.
//     When handler: names a main package beside such a library, Files
//     puts Serve alone into the handler, serving the library's Handlers.
//
// A handler that implements Tools stops compiling when a tool or field is
// renamed or retyped in the contract, instead of failing at run time.
//
// Go names are the contract's snake_case names in Go's style: query_weather
// is QueryWeather, city_id is CityID. Since every Go keyword is lower case,
// no exported name is one. Two contract names with one Go name are an error
// at the contract's position, and Generate then returns no code.
package gogen

import (
	"errors"
	"fmt"
	"go/build"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/inputfile"
)

// FileName is the name of the generated file, in the handler directory.
const FileName = "tools_gen.go"

// Generator is the name the generated code gives for the tool that wrote
// it, in its "Code generated ... DO NOT EDIT." header.
const Generator = "toolc gen go"

// Generate returns the Go source of the typed handler API of svc, as a
// file of package goPackage, gofmt-formatted; Serve is in it when
// goPackage is main. When the contract has names
// that Go cannot tell apart, the error is a diag.List of each problem at
// its contract position, in source order, and there is no source.
func Generate(svc *catalog.Service, goPackage string) ([]byte, error) {
	g, err := planned(svc, goPackage)
	if err != nil {
		return nil, err
	}
	return g.generate(goPackage)
}

// planned returns the generator of svc with every Go name decided, or the
// names that Go cannot use, as a diag.List in source order.
func planned(svc *catalog.Service, goPackage string) (*generator, error) {
	if !token.IsIdentifier(goPackage) {
		return nil, fmt.Errorf("gogen: %q is not a Go package name", goPackage)
	}
	g := &generator{svc: svc, names: map[string]origin{}}
	g.plan()
	if len(g.errs) > 0 {
		diag.Sort(g.errs)
		return nil, g.errs
	}
	return g, nil
}

// generate writes the file of package goPackage for the planned service.
func (g *generator) generate(goPackage string) ([]byte, error) {
	g.plugin = goPackage == "main"
	f := newGeneratedFile(goPackage, g.header()...)
	g.genInterface(f)
	g.genHandlers(f)
	if g.plugin {
		g.genServe(f)
	}
	for _, t := range g.tools {
		g.genMessage(f, t, &t.request)
		if t.response != nil {
			g.genMessage(f, t, t.response)
		}
	}
	g.genHandledTypes(f)
	g.genJSONHandler(f)
	return f.Content()
}

// Path returns where the generated file of svc goes: FileName in the
// handler directory, svc.Dir joined with svc.Handler, in the form of the
// operating system.
func Path(svc *catalog.Service) string {
	return filepath.Join(filepath.FromSlash(svc.Dir), filepath.FromSlash(svc.Handler), FileName)
}

// PackageName returns the package that generated code in dir belongs to:
// the package of the Go files there, other than the generated file itself
// and tests, for the build context of this process. A directory without
// Go files, or no directory yet, gives main: a handler is a main package.
func PackageName(dir string) (string, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "main", nil
	}
	ctxt := build.Default
	ctxt.OpenFile = inputfile.GoBuildOpen // never blocks on a FIFO named x.go
	ctxt.ReadDir = func(dir string) ([]fs.FileInfo, error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var infos []fs.FileInfo
		for _, e := range entries {
			if e.Name() == FileName {
				continue
			}
			info, err := e.Info()
			if err != nil {
				return nil, err
			}
			infos = append(infos, info)
		}
		return infos, nil
	}
	pkg, err := ctxt.ImportDir(dir, 0)
	var noGo *build.NoGoError
	switch {
	case errors.As(err, &noGo):
		return "main", nil
	case err != nil:
		return "", err
	}
	return pkg.Name, nil
}
