// Package dev is the hot-reloading daemon behind `toolc dev`: it compiles
// contracts, builds and starts their handler plugins, serves them through a
// runtime, and on every edit recompiles or rebuilds only what changed and
// swaps the result in, keeping the last good state when an edit is broken.
//
//	d, err := dev.New(dev.Options{Patterns: []string{"./examples/..."}, Runtime: rt, Status: os.Stderr})
//	err = d.Start(ctx) // first compile, build and swap
//	err = d.Run(ctx)   // watch and reload until ctx ends
package dev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/gogen"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/graceful"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/serve"
	"github.com/toolc/toolc/upstream"
	"github.com/toolc/toolc/watch"
)

// Options configure a daemon.
type Options struct {
	// Dir is the working directory; patterns and printed paths are
	// relative to it. Empty means the process's.
	Dir string
	// Patterns name the contract packages, Go-style. Default ./...
	Patterns []string
	// Runtime is the runtime the daemon swaps snapshots into.
	Runtime *runtime.Runtime
	// Status receives a line per reload and the diagnostics of a failed
	// compile, through diag.Printable. Default io.Discard.
	Status io.Writer
	// CacheDir is where handlers are built. Default host.CacheDir().
	CacheDir string
	// Host configures plugin processes.
	Host host.Options
	// Upstream configures the upstream MCP servers of the services that
	// have one, bounded for Runtime (upstream.Options.For); its OnChange
	// is the daemon's.
	Upstream upstream.Options
	// Debounce and Poll configure the watcher (see watch.Options).
	Debounce, Poll time.Duration
	// Grace is how long calls in flight on a replaced plugin may take to
	// finish before it is stopped. Default 10s.
	Grace time.Duration
	// BuildProgress is how often a handler build that runs long says on
	// Status that it is still going. Default 10s.
	BuildProgress time.Duration
	Logger        *slog.Logger
	// Loaded, if set, is told how each reload ended until one has
	// succeeded: why it failed, or nil. Until then no tools are served,
	// and a server tells its clients why (see mcpserver.Gate); after,
	// a failed reload keeps the last good state, which is served.
	Loaded func(err error)
}

// Daemon compiles, builds, serves and reloads.
type Daemon struct {
	opts    Options
	wd      string
	session *compiler.Session
	// lockPath is toolc.lock in the working directory: while it exists,
	// the contracts are held to it as toolc check holds them, and an edit
	// of it (toolc lock accepting a change) recompiles.
	lockPath string

	// w is the watcher, started by Start before the first build so that
	// no edit made during it is missed. trees are the directories it
	// reports on (see roots).
	w     *watch.Watcher
	trees []string

	// served is set once a reload has succeeded: before, there is no
	// last good state, and nothing is served.
	served bool
	// state is the last good state, touched only by the reload loop.
	cat     *catalog.Catalog
	plugins map[string]*handle // by service
	pkgs    map[string]string  // service → handler package, absolute
	// dirty are the services whose handler changed since a reload last
	// tried to build it: a reload that fails before building (a broken
	// contract) must not forget them.
	dirty map[string]bool
	// contractsPending is set while the contracts on disk are not the ones
	// served: an edit of them compiled but did not go live (the handler
	// lacked a new tool, say), or did not compile. Every reload compiles
	// again until one succeeds, so that a handler saved after its contract
	// brings the contract's tools in with it.
	contractsPending bool
	// warned are the warnings of the last compile (see printDiagnostics);
	// nil before the first.
	warned map[string]bool

	// deps are, by service, the local packages outside its handler's
	// tree that the last listing after a build of it found (see
	// listDeps); nil before the first. An edit in one rebuilds the
	// service's handler, and no other.
	deps map[string]*localDeps
	// listed caches listings by the inputs of the build they followed
	// (see takeDeps), so that a build of inputs seen before runs no go
	// list.
	listed map[string]*localDeps
	// listFailed are the services whose last listing failed, and which
	// have been told so once.
	listFailed map[string]bool
	// genChecked holds, by service, the genKey of the contract whose
	// generated code reportStale last checked.
	genChecked map[string]string
	// setDirs is the set of directories last given to the watcher's
	// SetDirs.
	setDirs []string
	// again asks Run for a reload with no new paths: a package that a
	// build brought in may have been edited while it ran (see takeDeps).
	again bool

	reloads chan struct{} // a signal per finished reload, for tests
	wg      sync.WaitGroup

	// upstreams are the running upstream servers, by service, touched
	// only by the reload loop.
	upstreams map[string]*upstreamRun
	// swapMu guards live, which an upstream's withdrawal or restoration
	// swaps again from its own goroutine.
	swapMu sync.Mutex
	live   liveState
}

// upstreamRun is a running upstream server, and the contract it was
// started for: a reload that changes neither keeps it.
type upstreamRun struct {
	srv *upstream.Server
	key string
}

// liveState is what the runtime serves: the catalog, before the
// withdrawn tools are left out, and its dispatchers.
type liveState struct {
	cat         *catalog.Catalog
	dispatchers map[string]runtime.Dispatcher
	servers     map[string]*upstream.Server
}

// upstreamKey says what an upstream server was started for: its block,
// its directory and its tools' contracts.
func upstreamKey(svc *catalog.Service) string {
	data, _ := json.Marshal(struct {
		Up    *catalog.Upstream
		Dir   string
		Tools []*catalog.Tool
	}{svc.Upstream, svc.Dir, svc.Tools})
	return string(data)
}

// swapLive swaps st into the runtime, without the withdrawn tools, and
// keeps it for reswap.
func (d *Daemon) swapLive(st liveState) error {
	d.swapMu.Lock()
	defer d.swapMu.Unlock()
	if _, err := upstream.Swap(d.opts.Runtime, st.cat, st.servers, st.dispatchers); err != nil {
		return err
	}
	d.live = st
	return nil
}

// reswap swaps the live state in again after srv withdrew or restored a
// tool. A server that is not live yet (it is starting for a reload, which
// swaps it in with what it found) changes nothing.
func (d *Daemon) reswap(srv *upstream.Server) {
	d.swapMu.Lock()
	defer d.swapMu.Unlock()
	if d.live.cat == nil || srv == nil || d.live.servers[srv.Service().Name] != srv {
		return
	}
	if _, err := upstream.Swap(d.opts.Runtime, d.live.cat, d.live.servers, d.live.dispatchers); err != nil {
		fmt.Fprintf(d.opts.Status, "toolc dev: after an upstream's tools changed: %v\n", err)
		return
	}
	fmt.Fprintf(d.opts.Status, "toolc dev: the upstream of %s withdrew or restored a tool; %s\n", srv.Service().Name, withdrawnNote(d.live.servers))
}

// withdrawnNote says which upstream tools are withdrawn.
func withdrawnNote(servers map[string]*upstream.Server) string {
	var out []string
	for _, srv := range servers {
		for tool, changes := range srv.Withdrawn() {
			out = append(out, fmt.Sprintf("%s (%s)", tool, changes[0].Rule))
		}
	}
	if len(out) == 0 {
		return "none is withdrawn"
	}
	slices.Sort(out)
	return "withdrawn, as the upstream differs from the contract: " + strings.Join(out, ", ")
}

// startUpstreams starts the upstream servers of next whose contract
// changed, or that are new.
func (d *Daemon) startUpstreams(ctx context.Context, next *catalog.Catalog) (map[string]*upstreamRun, error) {
	started := map[string]*upstreamRun{}
	for _, svc := range next.Services {
		if svc.Upstream == nil {
			continue
		}
		key := upstreamKey(svc)
		if u := d.upstreams[svc.Name]; u != nil && u.key == key {
			continue
		}
		opts := d.opts.Upstream.For(d.opts.Runtime)
		opts.Base = d.wd
		var self atomic.Pointer[upstream.Server]
		opts.OnChange = func(string) { d.reswap(self.Load()) }
		srv, err := upstream.Start(ctx, svc, opts)
		self.Store(srv)
		if err != nil {
			for _, u := range started {
				u.srv.Close(0)
			}
			return nil, err
		}
		started[svc.Name] = &upstreamRun{srv: srv, key: key}
	}
	return started, nil
}

// New returns a daemon; Start compiles for the first time.
func New(opts Options) (*Daemon, error) {
	if opts.Runtime == nil {
		return nil, errors.New("dev: no runtime")
	}
	if opts.Status == nil {
		opts.Status = io.Discard
	}
	// Status lines name files and quote contracts, which may be anyone's:
	// a terminal must show them rather than act on them.
	opts.Status = diag.NewPrintableWriter(opts.Status)
	if opts.Grace <= 0 {
		opts.Grace = 10 * time.Second
	}
	if opts.BuildProgress <= 0 {
		opts.BuildProgress = 10 * time.Second
	}
	if opts.CacheDir == "" {
		d, err := host.CacheDir()
		if err != nil {
			return nil, err
		}
		opts.CacheDir = d
	}
	if len(opts.Patterns) == 0 {
		opts.Patterns = []string{"./..."}
	}
	wd := opts.Dir
	if wd == "" {
		wd = "."
	}
	wd, err := filepath.Abs(wd)
	if err != nil {
		return nil, err
	}
	lockPath := filepath.Join(wd, lock.FileName)
	l, err := readLock(lockPath)
	if err != nil {
		return nil, err
	}
	s, err := compiler.NewSession(compiler.Config{Dir: opts.Dir, Lock: l}, opts.Patterns...)
	if err != nil {
		return nil, err
	}
	return &Daemon{
		opts:      opts,
		wd:        wd,
		session:   s,
		lockPath:  lockPath,
		cat:       &catalog.Catalog{Services: []*catalog.Service{}},
		plugins:   map[string]*handle{},
		upstreams: map[string]*upstreamRun{},
		pkgs:      map[string]string{},
		dirty:     map[string]bool{},
		reloads:   make(chan struct{}, 1024),

		deps:       map[string]*localDeps{},
		listed:     map[string]*localDeps{},
		listFailed: map[string]bool{},
	}, nil
}

// Start compiles, builds and starts everything once. A contract or a
// handler that fails is reported on Status and leaves the daemon serving
// what it could, waiting for a fix; only a problem with the patterns
// themselves is an error.
//
// Start begins watching before it builds anything, so that an edit saved
// while the first build runs is reloaded by Run, not missed.
func (d *Daemon) Start(ctx context.Context) error {
	// A first compile finds the handler packages to watch. Its result is
	// thrown away: the full reload below compiles again, after the
	// watcher has recorded the files, so that nothing saved in between
	// is lost.
	res, err := d.session.Compile()
	if err != nil {
		return err
	}
	pkgs := map[string]string{}
	for _, svc := range res.Catalog.Services {
		pkg, _ := filepath.Abs(host.HandlerDir(d.wd, svc))
		pkgs[svc.Name] = pkg
	}
	if d.w, err = d.watch(pkgs); err != nil {
		return err
	}
	d.reload(ctx, nil, true)
	return nil
}

func (d *Daemon) watch(pkgs map[string]string) (*watch.Watcher, error) {
	d.trees = d.roots(pkgs)
	return watch.New(d.parents(d.trees), watch.Options{
		Debounce: d.opts.Debounce,
		Poll:     d.opts.Poll,
		Ignore:   d.ignore,
	})
}

// Tools is how serve.Run drives the daemon, the start-up that toolc dev
// shares with toolc serve: Start is the first load, which opens the
// server's gate itself (Options.Loaded: until a reload succeeds, clients
// are told why the last one failed), and Run follows the edits once it is
// over, stopping the daemon's own handlers as it ends; an error that ends
// Run is said on Status.
func (d *Daemon) Tools() serve.Tools {
	return serve.Tools{
		Load:      d.Start,
		OpensGate: true,
		// An edit may bring prompts, resources or skills to a session
		// that initialized without them.
		Declared: mcpserver.Features{Prompts: true, Resources: true, Completions: true, Skills: true, Tasks: true},
		Follow: func(ctx context.Context) error {
			err := d.Run(ctx)
			if err != nil {
				fmt.Fprintf(d.opts.Status, "toolc dev: %v\n", err)
			}
			return err
		},
	}
}

// Run watches the contracts and handlers and reloads after every change
// until ctx ends; then it stops the plugins.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.stopAll()
	w := d.w
	if w == nil {
		var err error
		if w, err = d.watch(d.pkgs); err != nil {
			return err
		}
		d.w = w
		d.setDirs = nil
		d.watchDeps()
	}
	defer w.Close()
	for {
		if d.again && ctx.Err() == nil {
			// A batch that is ready goes with the reload asked for.
			d.again = false
			var b watch.Batch
			select {
			case b = <-w.Batches():
			default:
			}
			d.reload(ctx, b.Paths, b.Rescan)
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors():
			fmt.Fprintf(d.opts.Status, "toolc dev: watching: %v\n", err)
		case b, ok := <-w.Batches():
			if !ok {
				return nil
			}
			d.reload(ctx, b.Paths, b.Rescan)
		}
	}
}

// Reloaded returns a channel that receives after every reload, good or
// bad, for tests that wait for one.
func (d *Daemon) Reloaded() <-chan struct{} { return d.reloads }

// roots are the directory trees to watch: each pattern's base directory,
// and each handler package outside them.
func (d *Daemon) roots(pkgs map[string]string) []string {
	var roots []string
	for _, p := range d.opts.Patterns {
		base := strings.TrimSuffix(filepath.ToSlash(p), "...")
		if base == "" {
			base = "."
		}
		if !filepath.IsAbs(base) {
			base = filepath.Join(d.wd, base)
		}
		roots = append(roots, filepath.Clean(base))
	}
	for _, pkg := range pkgs {
		if !slices.ContainsFunc(roots, func(r string) bool { return within(r, pkg) }) {
			roots = append(roots, pkg)
		}
	}
	return roots
}

// parents are the directories the watcher walks: the parent of each tree,
// so that a tree deleted and created again is seen (a watch on the tree
// itself goes with it), or the tree itself when it holds the working
// directory. ignore keeps the watcher out of everything else in a parent.
// A tree that is a symlink is walked itself, as the watcher follows a
// root that is a symlink and no other: walking its parent would pass
// over it.
func (d *Daemon) parents(trees []string) []string {
	var dirs, links []string
	for _, t := range trees {
		switch fi, err := os.Lstat(t); {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			links = append(links, t)
		case within(t, d.wd):
			dirs = append(dirs, t)
		default:
			dirs = append(dirs, filepath.Dir(t))
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	dirs = slices.DeleteFunc(slices.Clone(dirs), func(dir string) bool {
		return slices.ContainsFunc(dirs, func(other string) bool { return other != dir && within(other, dir) })
	})
	return append(dirs, links...)
}

// ignore tells the watcher what to skip: the handler cache, and in the
// parents of the trees, everything but the trees, the directories that
// lead to them, and the Go module files above a handler.
func (d *Daemon) ignore(path string, isDir bool) bool {
	if isDir && within(d.opts.CacheDir, path) {
		return true
	}
	if !isDir && path == d.lockPath {
		return false
	}
	base := filepath.Base(path)
	moduleFile := !isDir && (base == "go.mod" || base == "go.sum" || base == "go.work")
	for _, t := range d.trees {
		if within(t, path) || isDir && within(path, t) || moduleFile && within(filepath.Dir(path), t) {
			return false
		}
	}
	return true
}

// readLock reads the lock file at path, or returns nil when there is none.
func readLock(path string) (*lock.Lock, error) {
	l, err := lock.LoadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return l, err
}

// change is what one batch of paths means for the daemon.
type change struct {
	contracts bool            // a .cue file or cue.mod changed: recompile
	lock      bool            // toolc.lock changed: read it, and recompile
	handlers  map[string]bool // services whose handler package changed
}

func (d *Daemon) classify(paths []string) change {
	c := change{handlers: map[string]bool{}}
	for _, p := range paths {
		base := filepath.Base(p)
		if p == d.lockPath {
			c.contracts, c.lock = true, true
			continue
		}
		if strings.HasSuffix(p, ".cue") || strings.Contains(filepath.ToSlash(p), "/cue.mod/") {
			c.contracts = true
			d.session.Invalidate(filepath.Dir(p))
			continue
		}
		if d.servesContent(p) {
			// A file that a prompt, resource or skill serves: the
			// contracts are checked again (the file may now break a rule)
			// and swapped in, which tells the subscribers of a resource
			// whose content changed.
			c.contracts = true
		}
		for svc, pkg := range d.pkgs {
			moduleFile := base == "go.mod" || base == "go.sum" || base == "go.work"
			if within(pkg, p) || moduleFile && within(filepath.Dir(p), pkg) {
				c.handlers[svc] = true
			}
		}
		for svc, deps := range d.deps {
			if deps.has(p) {
				c.handlers[svc] = true
			}
		}
	}
	return c
}

// servesContent reports whether p is a file that the served catalog's
// prompts, resources or skills serve: a resource's or a message's file,
// or anything in a skill's directory.
func (d *Daemon) servesContent(p string) bool {
	if d.cat == nil {
		return false
	}
	for _, svc := range d.cat.Services {
		dir := filepath.Join(d.wd, filepath.FromSlash(svc.Dir))
		if !within(dir, p) {
			continue
		}
		named := func(name string) bool { return name != "" && filepath.Join(dir, filepath.FromSlash(name)) == p }
		for _, r := range svc.Resources {
			if named(r.File) {
				return true
			}
		}
		for _, pr := range svc.Prompts {
			for _, m := range pr.Messages {
				if named(m.File) {
					return true
				}
			}
		}
		for _, sk := range svc.Skills {
			if within(filepath.Join(dir, filepath.FromSlash(sk.Dir)), p) {
				return true
			}
		}
	}
	return false
}

// reload brings the daemon up to date with the paths that changed (all of
// them when full is set), and reports on Status what it did. It returns
// nothing: a reload that fails keeps the last good state and says why on
// Status, which is all that Start and Run do with a failure.
func (d *Daemon) reload(ctx context.Context, paths []string, full bool) {
	defer func() {
		select {
		case d.reloads <- struct{}{}:
		default:
		}
	}()
	// Until the first good state, every reload that tried says how it
	// ended.
	if tried, err := d.reloadOnce(ctx, paths, full); tried && !d.served {
		if d.opts.Loaded != nil {
			d.opts.Loaded(brief(err))
		}
		d.served = err == nil
	}
}

// brief is what a client is told of a failed reload: a compiler's output
// may run to pages, which toolc dev's standard error has in full, and a
// file name may hold terminal controls, which a client may print.
func brief(err error) error {
	const maxLines, maxBytes = 12, 2000
	if err == nil {
		return nil
	}
	msg := diag.Printable(err.Error())
	lines := strings.SplitAfter(msg, "\n")
	cut := len(lines) > maxLines
	if cut {
		msg = strings.Join(lines[:maxLines], "")
	}
	if len(msg) > maxBytes {
		msg, cut = strings.ToValidUTF8(msg[:maxBytes], ""), true
	}
	if cut {
		msg = strings.TrimRight(msg, "\n") + "\n... (toolc dev's standard error has the rest)"
	}
	return errors.New(msg)
}

// keeping says what a failed reload leaves served: the last good state
// (or contracts), or, before any reload succeeded, nothing.
func (d *Daemon) keeping(what string) string {
	if d.served {
		return "still serving the last good " + what
	}
	return "no tools are served until a reload succeeds"
}

// reloadOnce is reload: tried is false if there was nothing to do, and err
// says why a reload that was tried failed, having been said on Status.
func (d *Daemon) reloadOnce(ctx context.Context, paths []string, full bool) (tried bool, err error) {
	start := time.Now()
	c := d.classify(paths)
	if full {
		c.contracts = true
		d.session.Invalidate(d.wd)
	}
	for svc := range d.dirty {
		c.handlers[svc] = true
	}
	if d.contractsPending {
		c.contracts = true
	}
	if !c.contracts && len(c.handlers) == 0 {
		return false, nil
	}
	// Remember the changed handlers until a build is tried.
	maps.Copy(d.dirty, c.handlers)
	var timing []string

	next := d.cat
	if c.lock || full {
		l, err := readLock(d.lockPath)
		if err != nil {
			fmt.Fprintf(d.opts.Status, "toolc dev: %v; %s\n", err, d.keeping("contracts"))
			return true, err
		}
		d.session.SetLock(l)
	}
	if c.contracts {
		// Until this reload succeeds, the contracts on disk are not served.
		d.contractsPending = true
		t := time.Now()
		if cat, err := d.compile(); err == nil {
			next = cat
			timing = append(timing, "compile "+ms(time.Since(t)))
			// After the reload's own line, whether it went live or not: a
			// handler that lacks a new tool fails it, and stale generated
			// code is then the likely reason.
			defer d.reportStale(cat)
		} else if len(c.handlers) == 0 {
			return true, err
		} else {
			// A handler edited while its contract is broken is still built,
			// against the contracts that are served.
			c.contracts = false
		}
	}

	// Build what is new or changed; keep every other plugin, and every
	// handler whose build inputs are those of the running build.
	pkgs := map[string]string{}
	ins := map[string]inputs{}
	var toBuild []*catalog.Service
	var unchanged, gone []string
	for _, svc := range next.Services {
		if svc.Upstream != nil {
			continue // an upstream server serves it: nothing to build
		}
		pkg, _ := filepath.Abs(host.HandlerDir(d.wd, svc))
		pkgs[svc.Name] = pkg
		h := d.plugins[svc.Name]
		if h != nil && !c.handlers[svc.Name] && d.pkgs[svc.Name] == pkg {
			continue
		}
		if _, err := os.Stat(pkg); h != nil && d.pkgs[svc.Name] == pkg && errors.Is(err, fs.ErrNotExist) {
			// The running handler's package is gone: deleted, or moved
			// away with the project's root, which may come back. A build
			// now would fail, or, started before the package is back and
			// run after, rebuild what did not change under inputs hashed
			// while it was gone. The running build stays, and the next
			// change tries again.
			gone = append(gone, svc.Name)
			continue
		}
		ins[svc.Name] = d.inputsOf(pkg, d.deps[svc.Name])
		if sum := ins[svc.Name].sum(); h != nil && d.pkgs[svc.Name] == pkg && sum != "" && sum == h.inputs.sum() {
			delete(c.handlers, svc.Name)
			unchanged = append(unchanged, svc.Name)
			continue
		}
		toBuild = append(toBuild, svc)
	}
	if len(gone) > 0 {
		fmt.Fprintf(d.opts.Status, "toolc dev: the handler package of %s does not exist; still serving its running build\n", strings.Join(gone, ", "))
		if !c.contracts && len(toBuild) == 0 {
			for _, svc := range unchanged {
				delete(d.dirty, svc)
			}
			return true, fmt.Errorf("the handler package of %s does not exist", strings.Join(gone, ", "))
		}
	}
	if len(unchanged) > 0 && !c.contracts && len(toBuild) == 0 {
		clear(d.dirty)
		what := "the handler of " + unchanged[0] + " is"
		if len(unchanged) > 1 {
			what = "the handlers of " + strings.Join(unchanged, ", ") + " are"
		}
		fmt.Fprintf(d.opts.Status, "toolc dev: %s unchanged: the build inputs are those of the running build; nothing rebuilt\n", what)
		return false, nil
	}
	// A build is tried for every changed handler that is still served: a
	// later edit must change it again to try again. A gone package's
	// handler is tried when it is back.
	clear(d.dirty)
	for _, svc := range gone {
		d.dirty[svc] = true
	}
	started := map[string]*host.Plugin{}
	binPaths := map[string]string{}
	if len(toBuild) > 0 {
		t := time.Now()
		// The packages the build reads are listed while it runs: the
		// listing takes a fraction of the build, and so adds nothing to
		// the reload unless it outlasts the build.
		listings := d.listAll(ctx, toBuild, pkgs, ins)
		bins, err := d.build(ctx, toBuild)
		failed := err != nil
		d.takeDeps(ctx, listings, ins, t)
		for _, b := range bins {
			binPaths[b.Service] = b.Path
		}
		timing = append(timing, fmt.Sprintf("build %s (%s)", ms(time.Since(t)), names(toBuild)))
		if len(bins) > 0 {
			t := time.Now()
			ps, serr := host.Start(ctx, bins, d.opts.Host)
			timing = append(timing, "start "+ms(time.Since(t)))
			if serr != nil {
				fmt.Fprintf(d.opts.Status, "toolc dev: %v\n", serr)
				failed, err = true, errors.Join(err, serr)
			} else {
				started = ps
			}
		}
		if failed {
			host.Stop(started, 0)
			removeBinaries(binPaths)
			fmt.Fprintf(d.opts.Status, "toolc dev: reload failed after %s (%s); %s\n", ms(time.Since(start)), strings.Join(timing, ", "), d.keeping("state"))
			return true, err
		}
	}

	t0 := time.Now()
	startedUps, err := d.startUpstreams(ctx, next)
	if err != nil {
		host.Stop(started, 0)
		removeBinaries(binPaths)
		fmt.Fprintf(d.opts.Status, "toolc dev: %v; %s\n", err, d.keeping("state"))
		return true, err
	}
	if len(startedUps) > 0 {
		timing = append(timing, "upstream "+ms(time.Since(t0)))
	}
	ups := map[string]*upstreamRun{}
	servers := map[string]*upstream.Server{}
	handles := map[string]*handle{}
	dispatchers := map[string]runtime.Dispatcher{}
	for _, svc := range next.Services {
		if svc.Upstream != nil {
			u := startedUps[svc.Name]
			if u == nil {
				u = d.upstreams[svc.Name]
			}
			if u != nil {
				ups[svc.Name], servers[svc.Name], dispatchers[svc.Name] = u, u.srv, u.srv
			}
			continue
		}
		if p := started[svc.Name]; p != nil {
			handles[svc.Name] = &handle{p: p, bin: binPaths[svc.Name], inputs: ins[svc.Name]}
		} else if h := d.plugins[svc.Name]; h != nil {
			handles[svc.Name] = h
		} else {
			continue
		}
		dispatchers[svc.Name] = handles[svc.Name]
	}
	t := time.Now()
	if err := d.swapLive(liveState{cat: next, dispatchers: dispatchers, servers: servers}); err != nil {
		host.Stop(started, 0)
		for _, u := range startedUps {
			u.srv.Close(0)
		}
		removeBinaries(binPaths)
		fmt.Fprintf(d.opts.Status, "toolc dev: %v; %s\n", err, d.keeping("state"))
		return true, err
	}
	timing = append(timing, "swap "+ms(time.Since(t)))

	// Retire replaced and removed plugins once their calls finish.
	for name, h := range d.plugins {
		if next := handles[name]; next != h {
			d.wg.Add(1)
			go func() { defer d.wg.Done(); h.retire(next, d.opts.Grace) }()
		}
	}
	d.plugins = handles
	for name, u := range d.upstreams {
		if ups[name] != u {
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				u.srv.Stop(d.opts.Grace, "its contract changed, and the call ran past the grace period")
			}()
		}
	}
	d.upstreams = ups
	old := d.cat
	d.cat, d.pkgs = next, pkgs
	for svc := range d.deps {
		if _, ok := pkgs[svc]; !ok {
			delete(d.deps, svc) // its service is gone
			delete(d.listFailed, svc)
		}
	}
	d.watchDeps()
	if c.contracts {
		d.contractsPending = false
	}
	note := ""
	if len(servers) > 0 {
		if w := withdrawnNote(servers); w != "none is withdrawn" {
			note = "; " + w
		}
	}
	fmt.Fprintf(d.opts.Status, "toolc dev: reloaded in %s: %s; %s%s\n", ms(time.Since(start)), describeChanges(old, next, c), strings.Join(timing, ", "), note)
	return true, nil
}

// compile compiles the contracts and prints their diagnostics. When they
// do not compile, it says so on Status and returns why: the first error,
// for a client to show.
func (d *Daemon) compile() (*catalog.Catalog, error) {
	res, err := d.session.Compile()
	if err != nil {
		fmt.Fprintf(d.opts.Status, "toolc dev: %v; %s\n", err, d.keeping("contracts"))
		return nil, err
	}
	d.printDiagnostics(res)
	if res.HasErrors() {
		errs, _ := diag.Split(res.Diagnostics)
		noun := "errors"
		if len(errs) == 1 {
			noun = "error"
		}
		fmt.Fprintf(d.opts.Status, "toolc dev: %d %s; %s\n", len(errs), noun, d.keeping("contracts"))
		why := fmt.Sprintf("the contracts have %d %s: %s", len(errs), noun, errs[0])
		if len(errs) > 1 {
			why += " (and more: toolc dev's standard error lists them)"
		}
		return nil, errors.New(why)
	}
	return res.Catalog, nil
}

// reportStale says, for each service whose generated Go code (toolc gen
// go) no longer matches its contract, which files are stale and the
// command that brings them up to date, as toolc gen go --check would: the
// handler is built from the code as it is, so its types may not be the
// contract's that clients see. A service with none of its generated files
// does not use toolc gen go, and is left alone.
//
// Only a service whose contract changed since the last check is checked
// again: generating the code of a large service takes a while, and a
// reload that did not change it cannot have made it stale.
func (d *Daemon) reportStale(cat *catalog.Catalog) {
	checked := map[string]string{}
	for _, svc := range cat.Services {
		key := genKey(svc)
		checked[svc.Name] = key
		if d.genChecked[svc.Name] == key {
			continue
		}
		files, err := gogen.Files(svc, d.wd)
		if err != nil {
			continue // names Go cannot use: toolc check and gen go say so
		}
		stale, err := gogen.StaleIn(d.wd, files)
		missing := 0
		for _, f := range stale {
			if strings.HasSuffix(f, " (missing)") {
				missing++
			}
		}
		if err != nil || len(stale) == 0 || missing == len(files) {
			continue
		}
		pattern := filepath.Clean(filepath.FromSlash(svc.Dir))
		if !filepath.IsAbs(pattern) && pattern != "." {
			pattern = "." + string(filepath.Separator) + pattern
		}
		fmt.Fprintf(d.opts.Status, "toolc dev: the generated Go code of %s does not match its contract: %s; the handler is built from it as it is, so its types may not be those clients see: run toolc gen go %s\n",
			svc.Name, strings.Join(stale, ", "), pattern)
	}
	d.genChecked = checked
}

// genKey is what a service's generated code is made from: its contract,
// by the fingerprints of its tools, and where it lives.
func genKey(svc *catalog.Service) string {
	parts := []string{svc.Name, svc.Version, svc.Description, svc.Dir, svc.Handler}
	for _, t := range svc.Tools {
		parts = append(parts, t.Fingerprint)
	}
	return strings.Join(parts, "\x00")
}

// printDiagnostics prints a compile's errors, and of its warnings only
// those that the previous compile did not have: the first compile sums
// them up in one line, as the other commands do, and each later warning is
// printed once, when it first appears. A warning is known by its file,
// rule and message, not its line, which an edit above it moves.
func (d *Daemon) printDiagnostics(res *compiler.Result) {
	errs, warns := diag.Split(res.Diagnostics)
	first := d.warned == nil
	known := d.warned
	d.warned = map[string]bool{}
	var fresh []diag.Diagnostic
	for _, w := range warns {
		key := w.Pos.File + "\x00" + w.Rule + "\x00" + w.Message
		if !known[key] {
			fresh = append(fresh, w)
		}
		d.warned[key] = true
	}
	diag.Print(d.opts.Status, diag.Text, errs, res.Source)
	if first {
		if s := diag.WarningSummary(warns); s != "" {
			fmt.Fprintf(d.opts.Status, "toolc dev: %s\n", s)
		}
		return
	}
	diag.Print(d.opts.Status, diag.Text, fresh, res.Source)
}

// build builds the services' handlers, reporting each failure with the
// compiler's output.
func (d *Daemon) build(ctx context.Context, svcs []*catalog.Service) ([]*host.Binary, error) {
	cat := &catalog.Catalog{Services: svcs}
	stop := d.buildProgress(svcs)
	bins, err := host.BuildAll(ctx, d.opts.CacheDir, d.wd, cat)
	stop()
	if err != nil {
		fmt.Fprintf(d.opts.Status, "toolc dev: %v\n", err)
		return nil, err
	}
	return bins, nil
}

// buildProgress says what a build builds and that it is still going: the
// first build on a machine compiles every package a handler imports
// (go-plugin, gRPC, protobuf) and can take minutes, which a silent
// terminal makes look like a hang. The daemon's first build says at once
// what it builds; every build that runs longer than BuildProgress says so,
// with the time so far, each BuildProgress. stop ends the reports; it
// returns once no more can be written.
func (d *Daemon) buildProgress(svcs []*catalog.Service) (stop func()) {
	what := "the handler of " + names(svcs)
	if len(svcs) > 1 {
		what = "the handlers of " + names(svcs)
	}
	if len(d.plugins) == 0 && d.cat != nil && len(d.cat.Services) == 0 {
		fmt.Fprintf(d.opts.Status, "toolc dev: building %s with go build; a first build on this machine also compiles every package it needs, which can take minutes\n", what)
	}
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(d.opts.BuildProgress)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(d.opts.Status, "toolc dev: still building %s (%s so far)\n", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func (d *Daemon) stopAll() {
	for _, h := range d.plugins {
		d.wg.Add(1)
		go func() { defer d.wg.Done(); h.retire(nil, d.opts.Grace) }()
	}
	for _, u := range d.upstreams {
		d.wg.Add(1)
		go func() { defer d.wg.Done(); u.srv.Stop(d.opts.Grace, "toolc dev is stopping") }()
	}
	d.wg.Wait()
}

// handle is the dispatcher that the daemon swaps in for a service's
// plugin. A call may look up its tool in a snapshot just before a reload
// replaces the plugin and reach the dispatcher only after: it waited for
// a slot under the runtime's MaxConcurrentCalls, say. By then the old
// plugin refuses new calls, so a retired handle passes them on to the
// plugin that replaced it; the calls that reached the old plugin before
// finish on it.
type handle struct {
	p   *host.Plugin
	bin string // the plugin's binary, removed once the plugin is retired
	// inputs are the hashes of the build inputs the binary was built
	// from, taken before the build: an edit during the build makes the
	// next hash differ, and so is built in turn. A package that the build
	// brought in is hashed after it (see takeDeps).
	inputs inputs

	mu       sync.Mutex
	retired  bool
	next     *handle // the replacement, nil if the service is gone
	inflight sync.WaitGroup
}

var _ runtime.Dispatcher = (*handle)(nil)

func (h *handle) Tools() []string { return h.p.Tools() }

func (h *handle) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(runtime.Event)) (*runtime.Result, error) {
	h.mu.Lock()
	if h.retired {
		next := h.next
		h.mu.Unlock()
		if next == nil {
			return nil, fmt.Errorf("the handler of %s was stopped: its service is gone", tool)
		}
		return next.Call(ctx, tool, callID, args, onEvent)
	}
	h.inflight.Add(1)
	h.mu.Unlock()
	defer h.inflight.Done()
	return h.p.Call(ctx, tool, callID, args, onEvent)
}

// retire sends new calls to next, and stops the plugin once the calls in
// flight on it finish, or after grace.
func (h *handle) retire(next *handle, grace time.Duration) {
	h.mu.Lock()
	h.retired, h.next = true, next
	h.mu.Unlock()
	graceful.Wait(&h.inflight, grace)
	reason := fmt.Sprintf("a rebuilt handler replaced it, and the call ran past the grace period of %s", grace)
	if next == nil {
		reason = fmt.Sprintf("its service is gone (or toolc dev is stopping), and the call ran past the grace period of %s", grace)
	}
	h.p.Stop(0, reason)
	if h.bin != "" && (next == nil || next.bin != h.bin) {
		os.Remove(h.bin)
	}
}

// removeBinaries deletes binaries that a failed reload built.
func removeBinaries(paths map[string]string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// describeChanges says which tools were added, removed or changed.
func describeChanges(old, next *catalog.Catalog, c change) string {
	before := map[string]string{}
	for _, t := range old.Tools() {
		before[t.Name] = t.Fingerprint
	}
	var added, changed, removed []string
	after := map[string]bool{}
	for _, t := range next.Tools() {
		after[t.Name] = true
		fp, ok := before[t.Name]
		switch {
		case !ok:
			added = append(added, "+"+t.Name)
		case fp != t.Fingerprint:
			changed = append(changed, "~"+t.Name)
		}
	}
	for name := range before {
		if !after[name] {
			removed = append(removed, "-"+name)
		}
	}
	slices.Sort(removed)
	parts := slices.Concat(added, removed, changed)
	var handlers []string
	for svc := range c.handlers {
		handlers = append(handlers, svc)
	}
	slices.Sort(handlers)
	desc := "tools unchanged"
	if len(parts) > 0 {
		desc = "tools " + strings.Join(parts, " ")
	}
	if len(handlers) > 0 {
		desc += "; handlers of " + strings.Join(handlers, ", ") + " rebuilt"
	}
	return desc
}

func names(svcs []*catalog.Service) string {
	var out []string
	for _, s := range svcs {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

func ms(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func within(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
