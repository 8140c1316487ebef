package host

import (
	"context"
	"maps"
	"sync"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"
)

// Source is where the handlers of a catalog's services come from: a
// bundle's prebuilt binaries (package bundle), or the services'
// directories, relative to Base, where Start builds them.
type Source struct {
	Catalog  *catalog.Catalog
	Binaries []*Binary // a bundle's; nil means build from Base
	Base     string
}

// Only narrows s to the service of one tool, named by its function name
// or its MCP name, so that toolc call builds and starts one handler; nil
// when no service has the tool.
func (s *Source) Only(tool string) *Source {
	for svc, t := range s.Catalog.Tools() {
		if t.Name == tool || t.ExposedMCPName(svc.Name) == tool {
			one := &Source{Catalog: &catalog.Catalog{Services: []*catalog.Service{svc}}, Base: s.Base}
			for _, b := range s.Binaries {
				if b.Service == svc.Name {
					one.Binaries = append(one.Binaries, b)
				}
			}
			return one
		}
	}
	return nil
}

// Start starts every service's handler plugin, building them first into
// cacheDir (see CacheDir) unless they are a bundle's.
func (s *Source) Start(ctx context.Context, cacheDir string, opts Options) (map[string]*Plugin, error) {
	bins := s.Binaries
	if bins == nil {
		var err error
		if bins, err = BuildAll(ctx, cacheDir, s.Base, s.Catalog); err != nil {
			return nil, err
		}
	}
	return Start(ctx, bins, opts)
}

// Handlers are what serves a catalog's services: the handler plugins of
// some, the upstream MCP servers (package upstream) of the others. The
// zero Handlers runs nothing, and a drain may come before Start is over
// (during the build): Stop then stops what runs, if anything.
type Handlers struct {
	mu        sync.Mutex
	plugins   map[string]*Plugin
	upstreams *upstream.Set
}

// Start starts the handler plugins of src's services, building them first
// into cacheDir unless they are a bundle's, and the upstream servers of
// the others, with up. If an upstream server cannot start, the plugins are
// stopped again.
func (h *Handlers) Start(ctx context.Context, src *Source, cacheDir string, opts Options, up upstream.Options) error {
	hosted, ups := upstream.Split(src.Catalog)
	ps, err := (&Source{Catalog: hosted, Binaries: src.Binaries, Base: src.Base}).Start(ctx, cacheDir, opts)
	if err != nil {
		return err
	}
	set, err := upstream.StartAll(ctx, ups, up)
	if err != nil {
		Stop(ps, 0)
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.plugins, h.upstreams = ps, set
	return nil
}

// Load is how toolc serve and toolc call get src's tools running in rt:
// it starts the handlers (Start), and the upstream servers with src's
// Base and bounded for rt (upstream.Options.For), and swaps src's catalog
// into rt with them (Serve).
func (h *Handlers) Load(ctx context.Context, rt *runtime.Runtime, src *Source, cacheDir string, opts Options, up upstream.Options) error {
	up = up.For(rt)
	up.Base = src.Base
	if err := h.Start(ctx, src, cacheDir, opts, up); err != nil {
		return err
	}
	return h.Serve(rt, src.Catalog)
}

// Upstreams are the upstream servers that Start started, nil before.
func (h *Handlers) Upstreams() *upstream.Set {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.upstreams
}

// Serve swaps cat into rt, with every handler that Start started, and
// keeps it current as upstream tools are withdrawn and restored.
func (h *Handlers) Serve(rt *runtime.Runtime, cat *catalog.Catalog) error {
	h.mu.Lock()
	dispatchers := Dispatchers(h.plugins)
	ups := h.upstreams
	h.mu.Unlock()
	maps.Copy(dispatchers, ups.Dispatchers())
	return ups.Serve(rt, cat, dispatchers)
}

// Stop stops every handler that runs at once, telling the calls still
// running why (see StopBecause).
func (h *Handlers) Stop(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var wg sync.WaitGroup
	if h.upstreams != nil {
		wg.Go(func() { h.upstreams.Stop(0, reason) })
	}
	StopBecause(h.plugins, 0, reason)
	wg.Wait()
}
