// Package compiler is toolc's front end: it loads CUE contract packages
// named by Go-style patterns, holds them to the rules, and lowers them into
// a catalog.
//
//	res, err := compiler.Compile(compiler.Config{}, "./...")
//	if err != nil { ... }          // a usage or I/O problem: exit status 2
//	diag.Print(os.Stdout, diag.Text, res.Diagnostics, res.Source)
//	if res.HasErrors() { ... }     // exit status 1
//
// Each package is evaluated once, in a fresh cue.Context, against the
// schema embedded in the binary; the rules then walk the evaluated data,
// so one run reports every problem in every package.
package compiler

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/schema"
)

// Config configures a compilation.
type Config struct {
	// Dir is the working directory: patterns are resolved and positions
	// reported relative to it. Empty means the process's.
	Dir string
	// Lock is what the stable-name rule compares the contracts with, as
	// toolc check and toolc build load it from toolc.lock; nil turns the
	// rule off. Only the lock's services in directories that the patterns
	// cover are compared.
	Lock *lock.Lock
	// Targets are the projections that provider-limit warns about; nil
	// means every target, as toolc check has it. toolc export passes the
	// one it prints.
	Targets []catalog.Target
	// Strict warns as if every tool were strict, as toolc export --strict
	// projects them; otherwise each tool's strict setting holds.
	Strict bool
}

// Result is the outcome of a compilation that could read its input.
type Result struct {
	// Catalog holds every service that evaluated to a struct, sorted by
	// name. It is complete only when there are no errors.
	Catalog *catalog.Catalog
	// Diagnostics are sorted by position.
	Diagnostics []diag.Diagnostic
	// Packages are the contract packages that were checked.
	Packages []*Package

	wd       string
	patterns []string
}

// HasErrors reports whether any diagnostic is an error.
func (r *Result) HasErrors() bool { return diag.HasErrors(r.Diagnostics) }

// Source reads a file named in a diagnostic, for quoting it.
func (r *Result) Source(file string) ([]byte, error) {
	if !filepath.IsAbs(file) {
		file = filepath.Join(r.wd, file)
	}
	return inputfile.ReadFile(file)
}

// Compile loads, checks and lowers the contract packages that the patterns
// name (default "./..."). The error is for problems with the input itself:
// a pattern that matches nothing, or a file that cannot be read. Problems
// in contracts are diagnostics.
func Compile(cfg Config, patterns ...string) (*Result, error) {
	s, err := NewSession(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	return s.Compile()
}

// Session compiles the same patterns again and again, as `toolc dev` does
// after each edit: it evaluates again only the packages in or below the
// directories that changed, each in a fresh cue.Context, and keeps the
// others. The rules always run over every package, since some (unique
// names) look across packages.
//
// A Session is not safe for concurrent use.
type Session struct {
	cfg      Config
	wd       string
	patterns []string
	loader   *loader
	cache    map[string][]*Package // by directory; an entry may hold no contract
}

// NewSession prepares to compile the patterns.
func NewSession(cfg Config, patterns ...string) (*Session, error) {
	wd := cfg.Dir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	wd, err := filepath.Abs(wd)
	if err != nil {
		return nil, err
	}
	l, err := newLoader()
	if err != nil {
		return nil, err
	}
	return &Session{cfg: cfg, wd: wd, patterns: patterns, loader: l, cache: map[string][]*Package{}}, nil
}

// SetLock replaces what the stable-name rule compares the contracts with
// from the next Compile on; nil turns the rule off. toolc dev calls it when
// toolc.lock changes.
func (s *Session) SetLock(l *lock.Lock) { s.cfg.Lock = l }

// Invalidate forgets the packages in or below each directory, so that the
// next Compile evaluates them again. A directory holding cue.mod forgets
// the whole module.
func (s *Session) Invalidate(dirs ...string) {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.wd, d)
		}
		d = filepath.Clean(d)
		if filepath.Base(d) == "cue.mod" || strings.Contains(d, string(filepath.Separator)+"cue.mod"+string(filepath.Separator)) {
			d = filepath.Dir(d[:strings.Index(d+string(filepath.Separator), string(filepath.Separator)+"cue.mod")+len(string(filepath.Separator)+"cue.mod")])
		}
		for cached := range s.cache {
			if within(d, cached) {
				delete(s.cache, cached)
			}
		}
	}
}

// Compile expands the patterns again, evaluates the packages that are not
// cached, and runs every rule.
func (s *Session) Compile() (*Result, error) {
	matches, err := expandPatterns(s.wd, s.patterns)
	if err != nil {
		return nil, err
	}
	pkgs, err := s.loader.loadAll(s.wd, matches, s.cache)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s: matched no contract packages (a contract imports %q)", strings.Join(patternsOrDefault(s.patterns), " "), schema.ImportPath)
	}
	wd := s.wd
	res := &Result{Packages: pkgs, wd: wd, patterns: s.patterns}
	all := rules(s.cfg, s.patterns)
	byID := map[string]*Rule{}
	for _, r := range all {
		r.Check(&Pass{rule: r, packages: pkgs, wd: wd, diags: &res.Diagnostics})
		byID[r.ID] = r
	}
	var stale []diag.Diagnostic
	acknowledge(&Pass{rule: byID[ignoreID], packages: pkgs, wd: wd, diags: &stale}, byID, res.Diagnostics)
	res.Diagnostics = append(res.Diagnostics, stale...)
	diag.Sort(res.Diagnostics)
	res.Diagnostics = diag.Compact(res.Diagnostics)

	res.Catalog = &catalog.Catalog{Services: []*catalog.Service{}}
	low := lowerer{wd: wd}
	for _, pkg := range pkgs {
		if pkg.root != nil && pkg.root.kind == kStruct {
			res.Catalog.Services = append(res.Catalog.Services, low.service(pkg))
		}
	}
	slices.SortStableFunc(res.Catalog.Services, func(a, b *catalog.Service) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Dir, b.Dir))
	})
	res.Catalog.Seal()
	return res, nil
}

func patternsOrDefault(p []string) []string {
	if len(p) == 0 {
		return []string{"./..."}
	}
	return p
}

// loadAll loads and evaluates every matched directory, in parallel: each
// package gets its own cue.Context, which is not safe for concurrent use.
//
// cache holds the packages of directories evaluated before; loadAll
// evaluates only the others and adds them to it.
func (l *loader) loadAll(wd string, matches []match, cache map[string][]*Package) ([]*Package, error) {
	explicit := map[string]bool{}
	var dirs []string
	for _, m := range matches {
		if _, ok := cache[m.dir]; ok {
			continue
		}
		dirs = append(dirs, m.dir)
		explicit[m.dir] = m.explicit
	}
	type job struct {
		root  *moduleRoot
		rules *fileRules
		ov    map[string][]byte
		dir   string
		out   []*Package
	}
	var jobs []*job
	var rules []*fileRules
	for _, r := range groupByModule(wd, dirs) {
		rr := newFileRules(wd, r.dir)
		rules = append(rules, rr)
		ov, err := l.overlay(rr, r)
		var refused *refusal
		if errors.As(err, &refused) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("%s: %v", relPath(wd, filepath.Join(r.dir, "cue.mod", "module.cue")), err)
		}
		for _, d := range r.dirs {
			jobs = append(jobs, &job{root: r, rules: rr, ov: ov, dir: d})
		}
	}
	work := make(chan *job)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				for _, inst := range l.loadDir(j.rules, j.root, j.ov, j.dir) {
					if pkg := l.evaluate(j.root, inst, explicit[j.dir]); pkg != nil {
						j.out = append(j.out, pkg)
					}
				}
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()

	var refused []error
	for _, r := range rules {
		refused = append(refused, r.refusals()...)
	}
	if refused != nil {
		// A file that breaks the contract file rules is an input problem
		// (exit 2), as an unreadable one is, and nothing of this load is
		// kept: the diagnostics of the packages that read it could quote
		// it.
		return nil, errors.Join(refused...)
	}
	for _, j := range jobs {
		cache[j.dir] = j.out
	}
	var pkgs []*Package
	for _, m := range matches {
		pkgs = append(pkgs, cache[m.dir]...)
	}
	slices.SortFunc(pkgs, func(a, b *Package) int { return cmp.Or(cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Name, b.Name)) })
	return pkgs, nil
}

// evaluate builds one instance. It returns nil for a package that a
// wildcard matched but that is not a contract.
func (l *loader) evaluate(r *moduleRoot, inst *build.Instance, explicit bool) *Package {
	if inst.Err == nil && len(inst.BuildFiles) == 0 {
		return nil // loading every package of a directory also yields an empty one
	}
	pkg := &Package{Dir: inst.Dir, Name: inst.PkgName, schema: l.schemaFile(r)}
	if inst.Err != nil {
		if !explicit && !mayBeContract(inst) {
			return nil
		}
		pkg.loadErrs = firstParseErrors(inst, cueerrors.Errors(inst.Err))
		return pkg
	}
	if !explicit && !slices.Contains(inst.ImportPaths, schema.ImportPath) {
		return nil
	}
	v := cuecontext.New().BuildInstance(inst)
	root, errs := decode(v)
	pos := servicePos(inst)
	if pos.IsValid() {
		root.pos = pos
	}
	for _, f := range inst.Files {
		pkg.files = append(pkg.files, f.Filename)
	}
	pkg.acks = collectAcks(inst.Files, pos)
	pkg.root = root
	for _, err := range errs {
		if isCompileError(err) {
			pkg.loadErrs = append(pkg.loadErrs, err)
		} else {
			pkg.evalErrs = append(pkg.evalErrs, err)
		}
	}
	return pkg
}

// firstParseErrors keeps only the first error in each file that did not
// parse: the parser's later errors are mostly echoes of the first, such as
// "expected '}', found 'EOF'" after a missing comma.
func firstParseErrors(inst *build.Instance, errs []cueerrors.Error) []cueerrors.Error {
	invalid := map[string]bool{}
	for _, f := range inst.InvalidFiles {
		invalid[f.Filename] = true
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(errs, func(err cueerrors.Error) bool {
		file := err.Position().Filename()
		if !invalid[file] {
			return false
		}
		dup := seen[file]
		seen[file] = true
		return dup
	})
}

// servicePos returns where a package declares its service, the embedded
// schema.#Service & {...}: CUE positions the root value at the top of a
// file, but "service has no name" belongs where the service is written.
func servicePos(inst *build.Instance) token.Pos {
	var first token.Pos
	for _, f := range inst.Files {
		for _, decl := range f.Decls {
			embed, ok := decl.(*ast.EmbedDecl)
			if !ok {
				continue
			}
			if !first.IsValid() {
				first = embed.Pos()
			}
			found := false
			ast.Walk(embed.Expr, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if name, _, _ := ast.LabelName(sel.Sel); name == "#Service" {
						found = true
					}
				}
				return !found
			}, nil)
			if found {
				return embed.Pos()
			}
		}
	}
	return first
}

// schemaFile is the path of the overlaid schema, whose positions are never
// shown to a user.
func (l *loader) schemaFile(r *moduleRoot) string {
	if r.schemaDep {
		return filepath.Join(embeddedRoot, "schema", schema.FileName)
	}
	if basePath(r.path) == basePath(schema.Module) {
		return filepath.Join(r.dir, "schema", schema.FileName)
	}
	return filepath.Join(r.dir, "cue.mod", "pkg", filepath.FromSlash(schema.ImportPath), schema.FileName)
}

// mayBeContract reports whether a package that failed to load could be a
// contract: it imports the schema, or a file did not parse far enough to
// tell. A broken contract must not be skipped silently.
func mayBeContract(inst *build.Instance) bool {
	// A misspelt schema import, such as github.com/toolc/toolc/schemas, is
	// a contract that does not load, not an unrelated package.
	if slices.ContainsFunc(inst.ImportPaths, func(p string) bool { return strings.HasPrefix(p, basePath(schema.Module)+"/") }) {
		return true
	}
	return len(inst.InvalidFiles) > 0 || len(inst.BuildFiles) == 0
}

// isCompileError reports whether an error arose while compiling the files
// rather than evaluating them: an unresolved reference is a load problem
// for the user, not a schema mismatch.
func isCompileError(err cueerrors.Error) bool {
	format, _ := err.Msg()
	return strings.HasPrefix(format, "reference %q not found") ||
		strings.HasPrefix(format, "undefined field: ") || // schema.#Servce
		strings.HasPrefix(format, "imported and not used") ||
		strings.Contains(format, "not found in package")
}
