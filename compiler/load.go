package compiler

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"

	"github.com/toolc/toolc/schema"
)

// The synthetic module that a contract directory without cue.mod belongs to.
const (
	localModule   = "toolc.local/contracts@v0"
	schemaVersion = "v0.0.0"
	cueLanguage   = "v0.17.0"
)

// moduleRoot is a directory holding cue.mod (real or synthesised) and the
// contract directories below it that are loaded together.
type moduleRoot struct {
	dir       string
	synthetic bool // no cue.mod on disk: toolc provides one in the overlay
	schemaDep bool // module.cue lists the toolc module as a dependency
	path      string
	dirs      []string
}

// findModuleRoot returns the nearest directory at or above dir that holds a
// cue.mod directory, or "" if there is none.
func findModuleRoot(dir string) string {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "cue.mod")); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// groupByModule assigns every contract directory to a module root. A
// directory with no cue.mod above it joins a synthetic module rooted at the
// working directory, or at itself when it lies outside the working
// directory, so that a plain directory of .cue files compiles as it is.
func groupByModule(wd string, dirs []string) []*moduleRoot {
	var roots []*moduleRoot
	byDir := map[string]*moduleRoot{}
	for _, d := range dirs {
		rootDir := findModuleRoot(d)
		synthetic := rootDir == ""
		if synthetic {
			rootDir = d
			if within(wd, d) {
				rootDir = wd
			}
		}
		r := byDir[rootDir]
		if r == nil {
			r = &moduleRoot{dir: rootDir, synthetic: synthetic}
			byDir[rootDir] = r
			roots = append(roots, r)
		}
		r.dirs = append(r.dirs, d)
	}
	return roots
}

func within(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// loader loads contract packages with the embedded schema in place of
// whatever github.com/toolc/toolc/schema would resolve to on disk.
type loader struct {
	evalSchema string // the schema source that contracts evaluate against
	registry   *embeddedRegistry
}

func newLoader() (*loader, error) {
	src, err := evaluationSchema(schema.Source())
	if err != nil {
		return nil, err
	}
	return &loader{evalSchema: src, registry: newEmbeddedRegistry(src)}, nil
}

// overlay returns the files that the loader reads from memory for a
// module root: the schema where the import path resolves to, and the
// module file (read here by the contract file rules, or synthesised when
// the root has none).
func (l *loader) overlay(rules *fileRules, r *moduleRoot) (map[string][]byte, error) {
	ov := map[string][]byte{}
	modFile := filepath.Join(r.dir, "cue.mod", "module.cue")
	r.path = localModule
	synthetic := []byte(fmt.Sprintf("module: %q\nlanguage: version: %q\n", localModule, cueLanguage))
	if r.synthetic {
		ov[modFile] = synthetic
	} else if data, err := rules.read(modFile, ""); err == nil {
		ov[modFile] = data
		mf, err := modfile.ParseNonStrict(data, modFile)
		if err != nil {
			return nil, err
		}
		r.path = mf.QualifiedModule()
		for dep := range mf.Deps {
			if basePath(dep) != basePath(schema.Module) {
				continue
			}
			r.schemaDep = true
			if dirExists(filepath.Join(r.dir, "cue.mod", "pkg", filepath.FromSlash(schema.ImportPath))) {
				// A copy in cue.mod/pkg as well would make the import
				// ambiguous: drop the dependency, and overlay the copy.
				delete(mf.Deps, dep)
				data, err := modfile.Format(mf)
				if err != nil {
					return nil, err
				}
				ov[modFile] = data
				r.schemaDep = false
			}
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		// A legacy cue.mod directory without module.cue.
		ov[modFile] = synthetic
	} else {
		return nil, err
	}
	src := []byte(l.evalSchema)
	switch {
	case r.schemaDep:
		// The embedded registry serves the schema.
		l.registry.overlay(ov)
	case basePath(r.path) == basePath(schema.Module):
		// Inside toolc's own module the schema is a package of the module.
		ov[filepath.Join(r.dir, "schema", schema.FileName)] = src
	default:
		ov[filepath.Join(r.dir, "cue.mod", "pkg", filepath.FromSlash(schema.ImportPath), schema.FileName)] = src
	}
	return ov, nil
}

// loadDir loads every CUE package in one directory. Every file that the
// loader reads is read first by the contract file rules (contractFiles),
// into the overlay, and what the loader read besides is checked
// afterwards; rules keeps what they refused.
func (l *loader) loadDir(rules *fileRules, r *moduleRoot, ov map[string][]byte, dir string) []*build.Instance {
	files := contractFiles(rules, ov, r.dir, basePath(r.path), dir)
	cfg := &load.Config{
		Dir:        dir,
		ModuleRoot: r.dir,
		Overlay:    sources(files),
		Package:    "*",
		Registry:   l.registry,
		Env:        []string{"CUE_REGISTRY=none"},
	}
	insts := load.Instances([]string{"."}, cfg)
	// CUE loads a file of a parent directory that does not parse into
	// every package below it, since it cannot tell the file's package: the
	// packages below would fail with the parent's error and hide their own.
	// The parent reports that error; load the packages below without it.
	// CUE does not always list such a file as invalid, so look at where
	// the errors are too.
	var stubbed map[string][]byte
	stub := func(file string) {
		if parent := filepath.Dir(file); parent == dir || !within(parent, dir) {
			return
		}
		if stubbed == nil {
			stubbed = maps.Clone(files)
		}
		stubbed[file] = []byte("package toolcunparsed\n")
	}
	for _, inst := range insts {
		for _, f := range inst.InvalidFiles {
			stub(f.Filename)
		}
		for _, err := range cueerrors.Errors(inst.Err) {
			if pos := err.Position(); pos.IsValid() {
				stub(pos.Filename())
			}
		}
	}
	if stubbed != nil {
		files = stubbed
		cfg.Overlay = sources(files)
		insts = load.Instances([]string{"."}, cfg)
	}
	checkLoaded(rules, files, insts)
	return insts
}

// sources converts files for load.Config.Overlay.
func sources(files map[string][]byte) map[string]load.Source {
	ov := make(map[string]load.Source, len(files))
	for p, data := range files {
		ov[p] = load.FromBytes(data)
	}
	return ov
}

// evaluationSchema derives the schema that contracts are evaluated against
// from the strict one: every definition that a contract may reference,
// declared as top. toolc's rules check the contract after evaluation, so
// CUE need not unify each field with a five-way disjunction first: that
// keeps CUE's disjunction errors away from the user, and is most of why
// `toolc check` is faster than `cue vet`.
func evaluationSchema(strict string) (string, error) {
	f, err := parser.ParseFile(schema.FileName, strict)
	if err != nil {
		return "", fmt.Errorf("embedded schema: %w", err)
	}
	var b strings.Builder
	b.WriteString("package schema\n\n")
	for _, decl := range f.Decls {
		field, ok := decl.(*ast.Field)
		if !ok {
			continue
		}
		name, _, err := ast.LabelName(field.Label)
		if err != nil || !strings.HasPrefix(name, "#") {
			continue
		}
		fmt.Fprintf(&b, "%s: _\n", name)
	}
	return b.String(), nil
}

// embeddedRegistry serves the toolc module from the binary, for a user
// module whose module.cue lists github.com/toolc/toolc@v0 as a dependency,
// and refuses every other module, so that loading never touches a network.
type embeddedRegistry struct {
	fs embeddedFS
}

// embeddedRoot is where the embedded module appears to be on disk. CUE's
// loader wants an OS path for a module's files, and reads them through the
// load overlay, so nothing is ever written there.
var embeddedRoot = filepath.Join(os.TempDir(), "toolc-embedded", filepath.FromSlash(basePath(schema.Module))+"@"+schemaVersion)

// embeddedFS is the embedded module as CUE's loader takes it: with an OS
// root, which a plain fstest.MapFS lacks ("cannot get absolute path").
type embeddedFS struct {
	fstest.MapFS
}

func (embeddedFS) OSRoot() string { return embeddedRoot }

func newEmbeddedRegistry(schemaSource string) *embeddedRegistry {
	return &embeddedRegistry{fs: embeddedFS{fstest.MapFS{
		"cue.mod/module.cue":        {Data: []byte(fmt.Sprintf("module: %q\nlanguage: version: %q\n", schema.Module, cueLanguage))},
		"schema/" + schema.FileName: {Data: []byte(schemaSource)},
	}}}
}

// overlay adds the embedded module's files to a load overlay at
// embeddedRoot.
func (r *embeddedRegistry) overlay(ov map[string][]byte) {
	for name, f := range r.fs.MapFS {
		ov[filepath.Join(embeddedRoot, filepath.FromSlash(name))] = f.Data
	}
}

func (r *embeddedRegistry) isToolc(mv module.Version) bool {
	return mv.BasePath() == basePath(schema.Module)
}

func (r *embeddedRegistry) ModFile(_ context.Context, mv module.Version) (*modfile.File, error) {
	if !r.isToolc(mv) {
		return nil, fmt.Errorf("module %s: toolc loads contracts offline and has only the embedded %s", mv, schema.Module)
	}
	data, err := fs.ReadFile(r.fs, "cue.mod/module.cue")
	if err != nil {
		return nil, err
	}
	return modfile.Parse(data, "cue.mod/module.cue")
}

func (r *embeddedRegistry) Fetch(_ context.Context, mv module.Version) (module.SourceLoc, error) {
	if !r.isToolc(mv) {
		return module.SourceLoc{}, fmt.Errorf("module %s: toolc loads contracts offline and has only the embedded %s", mv, schema.Module)
	}
	return module.SourceLoc{FS: r.fs, Dir: "."}, nil
}

func (r *embeddedRegistry) ModuleVersions(_ context.Context, mpath string) ([]string, error) {
	if basePath(mpath) == basePath(schema.Module) {
		return []string{schemaVersion}, nil
	}
	return nil, nil
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// basePath strips the major version from a module path:
// github.com/toolc/toolc@v0 becomes github.com/toolc/toolc.
func basePath(p string) string {
	base, _, _ := strings.Cut(p, "@")
	return base
}
