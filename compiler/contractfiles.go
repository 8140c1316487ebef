package compiler

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/internal/inputfile"
)

// The CUE loader reads files by their names, from the disk, wherever they
// lead, and whole: a committed leak.cue -> /proc/self/environ is echoed by
// the diagnostics, the catalog and every projection; a FIFO blocks the
// loader for ever; /dev/zero fills memory. And it reads more than the
// contract package: the .cue files of the directories above it, of every
// package it imports (in the module, in cue.mod/gen, pkg and usr), the
// targets of @embed, and cue.mod's own files.
//
// So toolc reads all of them first, by its own rules, into the loader's
// overlay, from which the loader then takes them without touching the
// disk (contractFiles):
//
//   - a contract file is read only from a regular file, within inputfile's
//     limit, and never blocks;
//   - it must lie inside its module, its links resolved (and never in
//     /proc or /sys);
//   - a file beside them that the loader would only list (data.json,
//     notes.txt, main.go: CUE reads such a file up front when it is no
//     regular file) is given to the loader empty when it is no regular
//     file, as it is no contract input.
//
// A file that breaks a rule is refused: the loader reports it as an I/O
// problem (exit 2), and nothing of the package that reads it is kept. What
// the loader reads that the read-ahead did not foresee (checkLoaded) is
// held to the same rules afterwards.

// fileRules reads contract files by the rules, for one module.
type fileRules struct {
	wd       string // for the paths in messages
	root     string // the module root, absolute
	realRoot string // root with its links resolved

	mu       sync.Mutex
	realDirs map[string]string
	refused  []error
}

func newFileRules(wd, root string) *fileRules {
	r := &fileRules{wd: wd, root: root, realRoot: root, realDirs: map[string]string{}}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		r.realRoot = real
	}
	return r
}

// read returns the contents of the contract file p, an absolute path. A
// file that breaks a rule is a *refusal, kept in refused, whose message
// starts with why (where the file is read from, "" for the file itself);
// an error of the file system (a missing file) is returned as it is.
func (r *fileRules) read(p, why string) ([]byte, error) {
	real, name, err := r.allowed(p, why)
	if err != nil {
		return nil, err
	}
	data, err := inputfile.ReadFile(real)
	var notRegular *inputfile.NotRegularError
	var tooLarge *inputfile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		notRegular.Name = name
		return nil, r.refuse(why, notRegular)
	case errors.As(err, &tooLarge):
		tooLarge.Name = name
		return nil, r.refuse(why, tooLarge)
	}
	return data, err
}

// allowed resolves p's links and checks where it leads: inside the
// module, and not into /proc or /sys. It returns the resolved path, and
// how messages name p.
func (r *fileRules) allowed(p, why string) (real, name string, err error) {
	real, err = r.resolve(p)
	if err != nil {
		return "", "", err
	}
	name = relPath(r.wd, p)
	if target, err := os.Readlink(p); err == nil {
		name += " (a link to " + target + ")"
	}
	if !within(r.realRoot, real) {
		return "", "", r.refuse(why, fmt.Errorf("%s leads outside the CUE module %s, to %s; toolc reads contract files only from inside their module", name, r.root, real))
	}
	for _, kernel := range []string{"/proc", "/sys"} {
		if filepath.Separator == '/' && within(kernel, real) {
			return "", "", r.refuse(why, fmt.Errorf("%s leads into %s, which the kernel makes; it is no contract file", name, kernel))
		}
	}
	return real, name, nil
}

// resolve returns p with its links resolved, resolving each directory
// once.
func (r *fileRules) resolve(p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return filepath.EvalSymlinks(p)
	}
	dir := filepath.Dir(p)
	r.mu.Lock()
	real, ok := r.realDirs[dir]
	r.mu.Unlock()
	if !ok {
		if real, err = filepath.EvalSymlinks(dir); err != nil {
			return "", err
		}
		r.mu.Lock()
		r.realDirs[dir] = real
		r.mu.Unlock()
	}
	return filepath.Join(real, filepath.Base(p)), nil
}

func (r *fileRules) refuse(why string, err error) error {
	if why != "" {
		err = fmt.Errorf("%s%w", why, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.ContainsFunc(r.refused, func(e error) bool { return e.Error() == err.Error() }) {
		r.refused = append(r.refused, err)
	}
	return &refusal{err}
}

// refusal is the error of a file that breaks a rule.
type refusal struct{ error }

func (r *refusal) Unwrap() error { return r.error }

// readInto reads the contract file p into ov. A refused file is put there
// empty, so that the loader does not read it itself.
func (r *fileRules) readInto(ov map[string][]byte, p, why string) bool {
	data, err := r.read(p, why)
	var refused *refusal
	switch {
	case err == nil:
		ov[p] = data
		return true
	case errors.As(err, &refused):
		ov[p] = []byte{}
	}
	return false
}

// refusals returns what was refused, in order; nil for nothing.
func (r *fileRules) refusals() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.refused)
}

// contractFiles reads ahead what the CUE loader will read to load the
// packages of dir in module root: into a copy of ov, which it returns.
// modPath is the module's path, without its major version; "" for none.
func contractFiles(rules *fileRules, ov map[string][]byte, root, modPath, dir string) map[string][]byte {
	s := &scan{rules: rules, ov: maps.Clone(ov), root: root, modPath: modPath, dirs: map[string]bool{}, neutral: map[string]bool{}}
	if ov == nil {
		s.ov = map[string][]byte{}
	}
	local := filepath.Join(root, "cue.mod", "local-module.cue")
	if _, ok := s.ov[local]; !ok {
		if _, err := os.Lstat(local); err == nil {
			rules.readInto(s.ov, local, "")
		}
	}
	s.tree(dir, root, "")
	return s.ov
}

// scan is one read-ahead.
type scan struct {
	rules   *fileRules
	ov      map[string][]byte
	root    string
	modPath string
	dirs    map[string]bool // directories read
	// neutral are the files put in ov empty, as no contract input.
	neutral map[string]bool
}

// tree reads dir and each directory above it up to top, as the loader
// adds the files of the directories above a package to it. why says what
// reads them, for messages.
func (s *scan) tree(dir, top, why string) {
	for d := dir; ; d = filepath.Dir(d) {
		s.dir(d, why)
		if d == top || !within(top, d) || filepath.Dir(d) == d {
			return
		}
	}
}

// dir reads the .cue files of one directory, neutralizes the special
// files beside them, and follows the imports and @embed attributes of the
// .cue files.
func (s *scan) dir(d, why string) {
	if s.dirs[d] {
		return
	}
	s.dirs[d] = true
	entries, _ := os.ReadDir(d) // an unreadable directory is CUE's to report
	var read []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(d, e.Name())
		if _, ok := s.ov[p]; ok {
			continue
		}
		if strings.HasSuffix(e.Name(), ".cue") {
			// A missing file (a dangling link) is CUE's to report; a
			// refused one, the caller's.
			if s.rules.readInto(s.ov, p, why) {
				read = append(read, p)
			}
			continue
		}
		if e.Type().IsRegular() {
			continue
		}
		if fi, err := os.Stat(p); err == nil && (fi.Mode().IsRegular() || fi.IsDir()) {
			continue
		}
		// A FIFO, a device, a socket, a link to one or a dangling link,
		// beside the contracts: CUE would read it whole, up front, were
		// its extension one it knows. No such file is contract input:
		// CUE lists the others as orphaned files, to which an empty file
		// is the same.
		s.ov[p] = []byte{}
		s.neutral[p] = true
	}
	for _, p := range read {
		s.follow(p, s.ov[p])
	}
}

// follow reads ahead the packages that the file p imports and the files
// it embeds.
func (s *scan) follow(p string, data []byte) {
	f, err := parser.ParseFile(p, data, parser.ImportsOnly)
	if err != nil {
		return // CUE reports it
	}
	for spec := range f.ImportSpecs() {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		s.importPath(imp, fmt.Sprintf("%s: import %q: ", s.where(spec.Path.Pos()), imp))
	}
	if bytes.Contains(data, []byte("@extern(embed)")) {
		s.embeds(p, data)
	}
}

// importPath reads ahead the directories that an import path can name:
// in the module, and in cue.mod's gen, pkg and usr, with the directories
// above each up to its top, as the loader looks in each.
func (s *scan) importPath(imp, why string) {
	imp, _, _ = strings.Cut(imp, ":")
	first, _, _ := strings.Cut(imp, "/")
	if !strings.Contains(first, ".") {
		return // the standard library
	}
	if s.modPath != "" && (imp == s.modPath || strings.HasPrefix(imp, s.modPath+"/")) {
		if d := filepath.Join(s.root, filepath.FromSlash(strings.TrimPrefix(imp, s.modPath))); dirExists(d) {
			s.tree(d, s.root, why)
		}
	}
	for _, sub := range []string{"gen", "pkg", "usr"} {
		top := filepath.Join(s.root, "cue.mod", sub)
		if d := filepath.Join(top, filepath.FromSlash(imp)); dirExists(d) {
			s.tree(d, top, why)
		}
	}
}

// embeds reads ahead, by the rules, the files that the @embed attributes
// of the file p name, relative to its directory: a file, or each file
// that a glob matches.
func (s *scan) embeds(p string, data []byte) {
	f, err := parser.ParseFile(p, data, parser.ParseComments)
	if err != nil {
		return
	}
	dir := filepath.Dir(p)
	ast.Walk(f, func(n ast.Node) bool {
		a, ok := n.(*ast.Attribute)
		if !ok {
			return true
		}
		name, body := a.Split()
		if name != "embed" {
			return true
		}
		args := attrArgs(body)
		var targets []string
		if file := args["file"]; file != "" && filepath.IsLocal(filepath.FromSlash(file)) {
			targets = append(targets, filepath.Join(dir, filepath.FromSlash(file)))
		}
		if glob := args["glob"]; glob != "" && filepath.IsLocal(filepath.FromSlash(glob)) {
			matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(glob)))
			targets = append(targets, matches...)
		}
		why := fmt.Sprintf("%s: %s: ", s.where(a.Pos()), a.Text)
		for _, t := range targets {
			// A file beside the contracts that was passed over as no
			// contract input is one now.
			if _, ok := s.ov[t]; ok && !s.neutral[t] {
				continue
			}
			if fi, err := os.Stat(t); err == nil && fi.IsDir() {
				continue // CUE says it cannot embed a directory
			}
			s.rules.readInto(s.ov, t, why)
		}
		return true
	}, nil)
}

// where is a position as messages give it: file:line:col, the file
// relative to the working directory.
func (s *scan) where(pos token.Pos) string {
	return fmt.Sprintf("%s:%d:%d", relPath(s.rules.wd, pos.Filename()), pos.Line(), pos.Column())
}

// attrArgs reads the key=value arguments of an attribute's body, such as
// file="x.json", type=json.
func attrArgs(body string) map[string]string {
	args := map[string]string{}
	for len(body) > 0 {
		arg, rest := body, ""
		inQuote := false
		for i := 0; i < len(body); i++ {
			switch c := body[i]; {
			case c == '\\' && inQuote:
				i++
			case c == '"':
				inQuote = !inQuote
			case c == ',' && !inQuote:
				arg, rest = body[:i], body[i+1:]
				i = len(body)
			}
		}
		body = rest
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		args[strings.TrimSpace(k)] = v
	}
	return args
}

// checkLoaded holds the files that the loaded instances were built from,
// and those of the packages they import, to the rules when they were not
// read ahead: CUE read those from the disk itself, which the read-ahead
// should have spared it.
func checkLoaded(rules *fileRules, ov map[string][]byte, insts []*build.Instance) {
	seen := map[*build.Instance]bool{}
	var visit func(*build.Instance)
	visit = func(inst *build.Instance) {
		if inst == nil || seen[inst] {
			return
		}
		seen[inst] = true
		for _, f := range inst.BuildFiles {
			if _, ok := ov[f.Filename]; !ok && filepath.IsAbs(f.Filename) {
				rules.allowed(f.Filename, "")
			}
		}
		for _, imp := range inst.Imports {
			visit(imp)
		}
	}
	for _, inst := range insts {
		visit(inst)
	}
}
