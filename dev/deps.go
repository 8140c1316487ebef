package dev

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolc/toolc/catalog"
)

// localDeps are the local packages that a build of a handler reads from
// outside the handler's directory tree, as `go list -deps` reports them:
// those of the main module (or of the go.work's modules) and of modules
// replaced by a local directory, never the module cache's or GOROOT's,
// which do not change under an edit.
type localDeps struct {
	// dirs are the directories of the packages, and those of the files
	// they embed, absolute and sorted. The files directly in each are
	// build inputs; its subdirectories are other packages.
	dirs []string
	// modFiles are the go.mod files of the local modules, whose
	// requirements take part in the build, absolute and sorted.
	modFiles []string
}

// parts names the inputs of the dependencies (see inputs).
func (l *localDeps) parts() []string {
	if l == nil {
		return nil
	}
	var parts []string
	for _, d := range l.dirs {
		parts = append(parts, "dir:"+d)
	}
	for _, f := range l.modFiles {
		parts = append(parts, "mod:"+f)
	}
	return parts
}

// watched are the directories to watch on their own (watch.SetDirs).
func (l *localDeps) watched() []string {
	if l == nil {
		return nil
	}
	dirs := slices.Clone(l.dirs)
	for _, f := range l.modFiles {
		dirs = append(dirs, filepath.Dir(f))
	}
	return dirs
}

// has reports whether a change of path may change the build.
func (l *localDeps) has(path string) bool {
	if l == nil {
		return false
	}
	_, inDir := slices.BinarySearch(l.dirs, filepath.Dir(path))
	_, modFile := slices.BinarySearch(l.modFiles, path)
	return inDir || modFile
}

func (l *localDeps) equal(o *localDeps) bool {
	if l == nil || o == nil {
		return l == o
	}
	return slices.Equal(l.dirs, o.dirs) && slices.Equal(l.modFiles, o.modFiles)
}

// listedPackage is what listDeps reads of `go list -json`.
type listedPackage struct {
	ImportPath string
	Dir        string
	EmbedFiles []string
	Module     *struct {
		Path    string
		Dir     string
		GoMod   string
		Main    bool
		Replace *struct{ Version string }
	}
	Error *struct{ Err string }
}

// listDeps lists the local packages that the handler package pkg
// imports, directly or not, outside its own tree. It runs go list with
// -e, so that a build that fails (an import of a package that is not
// there yet) still gives the packages it found; a package that is missing
// is named by the directory it would have in its module, so that making
// it rebuilds the handler.
func listDeps(ctx context.Context, pkg string) (*localDeps, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-deps", "-json=ImportPath,Dir,EmbedFiles,Module,Error", ".")
	cmd.Dir = pkg
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			return nil, fmt.Errorf("go list: %w", err)
		}
		return nil, fmt.Errorf("go list: %s", msg)
	}
	var pkgs []listedPackage
	modules := map[string]string{} // local module path → directory
	deps := &localDeps{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: reading its output: %v", err)
		}
		pkgs = append(pkgs, p)
		// A module is local when it is a main module (of go.mod or go.work)
		// or replaced by a directory: a directory replacement has no version.
		if m := p.Module; m != nil && m.Dir != "" && (m.Main || m.Replace != nil && m.Replace.Version == "") {
			modules[m.Path] = m.Dir
			if m.GoMod != "" {
				deps.modFiles = append(deps.modFiles, m.GoMod)
			}
		}
	}
	add := func(dir string) {
		if dir != "" && !within(pkg, dir) {
			deps.dirs = append(deps.dirs, filepath.Clean(dir))
		}
	}
	for _, p := range pkgs {
		m := p.Module
		switch {
		case m != nil && modules[m.Path] != "" && p.Dir != "":
			add(p.Dir)
			for _, f := range p.EmbedFiles {
				add(filepath.Dir(filepath.Join(p.Dir, filepath.FromSlash(f))))
			}
		case p.Dir == "" && p.Error != nil:
			// Missing: the directory it would have in the local module whose
			// path is the longest prefix of its import path.
			best := ""
			for path := range modules {
				if (p.ImportPath == path || strings.HasPrefix(p.ImportPath, path+"/")) && len(path) > len(best) {
					best = path
				}
			}
			if best != "" {
				add(filepath.Join(modules[best], filepath.FromSlash(strings.TrimPrefix(p.ImportPath, best))))
			}
		}
	}
	slices.Sort(deps.dirs)
	deps.dirs = slices.Compact(deps.dirs)
	slices.Sort(deps.modFiles)
	deps.modFiles = slices.Compact(deps.modFiles)
	return deps, nil
}

// listing is one service's listing of its handler's local packages.
type listing struct {
	key  string // the inputs' sum before the build
	deps *localDeps
	err  error
	took time.Duration
	done chan struct{}
}

// listAll starts listing the local packages of each service's handler,
// two at a time, as BuildAll builds them; a handler whose inputs were
// listed before is not listed again.
func (d *Daemon) listAll(ctx context.Context, svcs []*catalog.Service, pkgs map[string]string, ins map[string]inputs) map[string]*listing {
	out := map[string]*listing{}
	sem := make(chan struct{}, 2)
	for _, svc := range svcs {
		l := &listing{key: ins[svc.Name].sum(), done: make(chan struct{})}
		out[svc.Name] = l
		if cached := d.listed[l.key]; l.key != "" && cached != nil {
			l.deps = cached
			close(l.done)
			continue
		}
		go func() {
			defer close(l.done)
			sem <- struct{}{}
			defer func() { <-sem }()
			t := time.Now()
			l.deps, l.err = listDeps(ctx, pkgs[svc.Name])
			l.took = time.Since(t)
			if d.opts.Logger != nil {
				d.opts.Logger.Debug("listed the local packages of a handler", "service", svc.Name, "took", l.took, "err", l.err)
			}
		}()
	}
	return out
}

// takeDeps waits for the listings, makes them the services' local
// packages, and watches those. A service whose listing failed keeps the
// packages it had, and is told of it once: the daemon then rebuilds its
// handler on edits of its tree and of those packages only.
//
// A package that a build brings in (an import added by the edit) was not
// hashed before the build, as nobody knew of it; it is hashed now, into
// the inputs of the build, once the watcher watches it. An edit of it
// saved while the build ran would fall between the two: when a file of
// it is newer than the build's start, its hash is left unknown and a
// reload follows, which builds again.
func (d *Daemon) takeDeps(ctx context.Context, listings map[string]*listing, ins map[string]inputs, buildStart time.Time) {
	added := map[string][]string{} // service → parts new to its inputs
	for _, svc := range slices.Sorted(maps.Keys(listings)) {
		l := listings[svc]
		<-l.done
		if l.err != nil {
			if ctx.Err() == nil && !d.listFailed[svc] {
				also := ""
				if len(d.deps[svc].parts()) > 0 {
					also = " and of the local packages it imported when last listed"
				}
				fmt.Fprintf(d.opts.Status, "toolc dev: cannot list the packages that the handler of %s imports, so only edits of its directory%s rebuild it: %v\n", svc, also, l.err)
				d.listFailed[svc] = true
			}
			continue
		}
		delete(d.listFailed, svc)
		old := d.deps[svc]
		if l.key != "" && old != nil && old.equal(l.deps) {
			// The inputs hashed were all that the listing read, so the
			// same inputs list the same.
			if len(d.listed) >= 64 {
				clear(d.listed)
			}
			d.listed[l.key] = l.deps
		}
		d.deps[svc] = l.deps
		in := ins[svc]
		keep := map[string]bool{".": true}
		for _, part := range l.deps.parts() {
			keep[part] = true
			if _, ok := in[part]; !ok {
				added[svc] = append(added[svc], part)
			}
		}
		maps.DeleteFunc(in, func(part, _ string) bool { return !keep[part] })
	}
	d.watchDeps()
	for svc, parts := range added {
		for _, part := range parts {
			sum, newest := hashPart(part)
			// File times come from a clock that ticks every few
			// milliseconds: an edit in the first of them of the build may
			// pass for one before it. Later ones are caught.
			if newest.After(buildStart) {
				sum = ""
				d.dirty[svc] = true
				d.again = true
			}
			ins[svc][part] = sum
		}
	}
}

// watchDeps has the watcher watch the local packages of every service.
func (d *Daemon) watchDeps() {
	var dirs []string
	for _, deps := range d.deps {
		dirs = append(dirs, deps.watched()...)
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	if d.w == nil || slices.Equal(dirs, d.setDirs) {
		return
	}
	d.w.SetDirs(dirs)
	d.setDirs = dirs
}
