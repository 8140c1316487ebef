package host

import (
	"context"
	"sync"
	"time"

	"github.com/toolc/toolc/catalog"
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

// Running holds the plugins of a load that may not have started them yet:
// a drain may come during the build, before there is anything to stop, and
// stops what runs once it does.
type Running struct {
	mu sync.Mutex
	ps map[string]*Plugin
}

// Set records the plugins that the load started.
func (r *Running) Set(ps map[string]*Plugin) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ps = ps
}

// StopBecause stops the plugins that run, if any (see StopBecause).
func (r *Running) StopBecause(grace time.Duration, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	StopBecause(r.ps, grace, reason)
}

// Stop stops the plugins that run, if any (see Stop).
func (r *Running) Stop(grace time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	Stop(r.ps, grace)
}
