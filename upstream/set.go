package upstream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/runtime"
)

// Split divides a catalog into the services that Go handler plugins
// serve and those that upstream servers do.
func Split(cat *catalog.Catalog) (plugins, upstreams *catalog.Catalog) {
	plugins, upstreams = &catalog.Catalog{Services: []*catalog.Service{}}, &catalog.Catalog{Services: []*catalog.Service{}}
	for _, svc := range cat.Services {
		if svc.Upstream != nil {
			upstreams.Services = append(upstreams.Services, svc)
		} else {
			plugins.Services = append(plugins.Services, svc)
		}
	}
	return plugins, upstreams
}

// Set is the upstream servers of a catalog's services, and the runtime
// they serve: it keeps the runtime serving the catalog without the tools
// its servers have withdrawn.
//
//	set, err := upstream.StartAll(ctx, cat, opts)
//	err = set.Serve(rt, cat, dispatchers) // the plugins' and set.Dispatchers()
type Set struct {
	servers map[string]*Server
	logger  func(err error)

	mu          sync.Mutex
	rt          *runtime.Runtime
	cat         *catalog.Catalog
	dispatchers map[string]runtime.Dispatcher
}

// StartAll starts the upstream server of every service of cat that has
// one, at once. On error it stops the ones it started.
func StartAll(ctx context.Context, cat *catalog.Catalog, opts Options) (*Set, error) {
	opts = opts.withDefaults()
	set := &Set{servers: map[string]*Server{}, logger: func(err error) {
		opts.Logger.Error("upstream: swapping the catalog failed", "error", err)
	}}
	onChange := opts.OnChange
	opts.OnChange = func(service string) {
		set.reswap()
		if onChange != nil {
			onChange(service)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for _, svc := range cat.Services {
		if svc.Upstream == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Start(ctx, svc, opts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			set.servers[svc.Name] = s
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		set.Stop(0, "another upstream failed to start")
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// Servers returns the servers, by service name.
func (s *Set) Servers() map[string]*Server {
	if s == nil {
		return nil
	}
	return maps.Clone(s.servers)
}

// Dispatchers returns the servers as the runtime's dispatchers.
func (s *Set) Dispatchers() map[string]runtime.Dispatcher {
	out := map[string]runtime.Dispatcher{}
	if s == nil {
		return out
	}
	for name, srv := range s.servers {
		out[name] = srv
	}
	return out
}

// Serve swaps cat into rt, without the withdrawn tools, with the
// dispatchers (which must include the set's), and swaps it again each
// time a tool is withdrawn or restored.
func (s *Set) Serve(rt *runtime.Runtime, cat *catalog.Catalog, dispatchers map[string]runtime.Dispatcher) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := Swap(rt, cat, s.servers, dispatchers); err != nil {
		return err
	}
	s.rt, s.cat, s.dispatchers = rt, cat, dispatchers
	return nil
}

func (s *Set) reswap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt == nil {
		return // Serve has not run yet: it filters with what is known then
	}
	if _, err := Swap(s.rt, s.cat, s.servers, s.dispatchers); err != nil {
		s.logger(fmt.Errorf("after a change to an upstream's tools: %w", err))
	}
}

// Stop stops every server, giving calls in flight up to grace.
func (s *Set) Stop(grace time.Duration, reason string) {
	if s == nil {
		return
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Add(1)
		go func() { defer wg.Done(); srv.Stop(grace, reason) }()
	}
	wg.Wait()
}

// Diff compares the live tools of the upstream server of every service of
// cat that has one with its contract (see Compare). Each server is
// started, listed and stopped. A service without an upstream is left
// out; ok is false when cat has none.
func Diff(ctx context.Context, cat *catalog.Catalog, opts Options) (changes []lock.Change, ok bool, err error) {
	var errs []error
	for _, svc := range cat.Services {
		if svc.Upstream == nil {
			continue
		}
		ok = true
		l, err := List(ctx, svc, opts)
		if err != nil {
			errs = append(errs, fmt.Errorf("service %q: %w", svc.Name, err))
			continue
		}
		changes = append(changes, Compare(svc, l.Tools)...)
	}
	return changes, ok, errors.Join(errs...)
}
