package gogen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/mod/modfile"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/inputfile"
)

// A File is one generated file.
type File struct {
	// Path is where the file goes, in the form of the operating system,
	// relative to the directory that the service's Dir is relative to.
	Path   string
	Source []byte
}

// Files returns the generated files of svc, whose Dir is relative to base.
//
// Usually that is two files in the handler directory, in the package of
// the Go files there: FileName (Generate; Serve is in it when that is a
// main package) and TestFileName beside it (GenerateTest). But when the
// contract's directory holds a Go library package and the contract's
// handler: names a main package elsewhere, the code splits in two: the
// tools' Go API (Tools, the types, Handlers) and its test file go into the
// library, and the handler gets a file of its own with Serve alone, which
// serves the library's Handlers. A service can then import the library to
// run the tools in process without linking the plugin protocol, while
// toolc dev and serve run the same tools as a plugin through the handler.
func Files(svc *catalog.Service, base string) ([]File, error) {
	handlerPath := Path(svc)
	handlerDir := filepath.Join(base, filepath.Dir(handlerPath))
	pkg, err := PackageName(handlerDir)
	if err != nil {
		return nil, err
	}
	contractDir := filepath.Join(base, filepath.FromSlash(svc.Dir))
	lib, hasGo, err := packageIn(contractDir)
	if err != nil {
		return nil, err
	}
	if pkg != "main" || !hasGo || lib == "main" || path.Clean(svc.Handler) == "." {
		g, err := planned(svc, pkg)
		if err != nil {
			return nil, err
		}
		src, err := g.generate(pkg)
		if err != nil {
			return nil, err
		}
		test, err := g.generateTest(pkg)
		if err != nil {
			return nil, err
		}
		return []File{{handlerPath, src}, {filepath.Join(filepath.Dir(handlerPath), TestFileName), test}}, nil
	}

	importPath, err := importPathOf(contractDir)
	if err != nil {
		return nil, err
	}
	if path.Base(importPath) != lib {
		return nil, fmt.Errorf("gogen: the contract's directory %s holds Go package %s, whose name is not the last element of its import path %s: the handler's Serve could not name it", contractDir, lib, importPath)
	}
	g := &generator{svc: svc, names: map[string]origin{}, inContractDir: true}
	g.plan()
	if len(g.errs) > 0 {
		diag.Sort(g.errs)
		return nil, g.errs
	}
	libSrc, err := g.generate(lib)
	if err != nil {
		return nil, err
	}
	testSrc, err := g.generateTest(lib)
	if err != nil {
		return nil, err
	}
	serveSrc, err := g.generateServe(importPath)
	if err != nil {
		return nil, err
	}
	return []File{
		{filepath.Join(filepath.FromSlash(svc.Dir), FileName), libSrc},
		{filepath.Join(filepath.FromSlash(svc.Dir), TestFileName), testSrc},
		{handlerPath, serveSrc},
	}, nil
}

// generateServe writes the handler's file when the tools' Go API is in
// the library at importPath: Serve alone, in package main.
func (g *generator) generateServe(importPath string) ([]byte, error) {
	h := &generator{svc: g.svc, tools: g.tools}
	f := newGeneratedFile("main", h.header()...)
	tools := goIdent{importPath, "Tools"}
	handlers := goIdent{importPath, "Handlers"}
	pkg := path.Base(importPath)
	f.Comment(0, "Serve serves impl as the handler plugin of "+g.svc.Name+", and returns when the host is done with it. "+
		"It is meant to be all of main. The tools' Go API, Tools and Handlers, is in package "+pkg+", "+
		"which does not import the plugin protocol, so that a service can import it to run the tools in process.")
	f.P("func Serve(impl ", tools, ") {")
	f.P(rpcServe, "(", handlers, "(impl)...)")
	f.P("}")
	return f.Content()
}

// packageIn returns the name of the Go package in dir, other than the
// generated file and tests, and whether there is one.
func packageIn(dir string) (name string, ok bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	name, err = PackageName(dir)
	if err != nil {
		return "", false, err
	}
	// PackageName says main for a directory without Go files, as a
	// handler's is; tell the two apart.
	ok, err = hasGoFiles(dir)
	return name, ok, err
}

func hasGoFiles(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && n != FileName && filepath.Ext(n) == ".go" && !isTestFile(n) {
			return true, nil
		}
	}
	return false, nil
}

func isTestFile(name string) bool {
	return len(name) > len("_test.go") && name[len(name)-len("_test.go"):] == "_test.go"
}

// importPathOf returns the import path of the package in dir: the path of
// the module whose go.mod is nearest above it, joined with dir's place in
// the module.
func importPathOf(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for root := abs; ; {
		data, err := inputfile.ReadFile(filepath.Join(root, "go.mod")) // a FIFO go.mod must not block gen go
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", fmt.Errorf("gogen: %s has no module line", filepath.Join(root, "go.mod"))
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return "", err
			}
			return path.Join(mod, filepath.ToSlash(rel)), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", fmt.Errorf("gogen: no go.mod in %s or above it, so the import path of its Go package is unknown", abs)
		}
		root = parent
	}
}
