package open

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolc/toolc/taskstore"
	"github.com/toolc/toolc/taskstore/boltstore"
)

// lazyFile is the default store before its first task: the file is made
// by the first Create, so that a server none of whose calls becomes a
// task leaves no file behind. Until then there is no task to find: Get
// and Update answer ErrNotFound, and Publish tells this process's
// subscribers, the only ones a file has.
type lazyFile struct {
	path string

	mu     sync.Mutex
	store  taskstore.Store // nil until the first Create
	closed bool

	subs taskstore.Subscribers
}

var _ taskstore.Store = (*lazyFile)(nil)

// lazy returns the store of path, opened at once if the file exists (so
// that the tasks that were running when its server died are failed now,
// see boltstore), and by its first Create otherwise. It checks now that
// the file's directory can hold it.
func lazy(path string) (taskstore.Store, error) {
	if _, err := os.Stat(path); err == nil {
		return boltstore.Open(path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil, err
	}
	probe.Close()
	os.Remove(probe.Name())
	return &lazyFile{path: path}, nil
}

// opened returns the file's store, opening it if create is set.
func (l *lazyFile) opened(create bool) (taskstore.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.store != nil || !create {
		return l.store, nil
	}
	if l.closed {
		return nil, errors.New("the task store is closed")
	}
	s, err := boltstore.Open(l.path)
	if err != nil {
		return nil, err
	}
	s.Subscribe(l.subs.Tell) // stopped by s.Close
	l.store = s
	return s, nil
}

func (l *lazyFile) Create(ctx context.Context, t *taskstore.Task, lim taskstore.Limits) error {
	s, err := l.opened(true)
	if err != nil {
		return err
	}
	return s.Create(ctx, t, lim)
}

func (l *lazyFile) Get(ctx context.Context, id string) (*taskstore.Task, error) {
	s, err := l.opened(false)
	if err != nil || s == nil {
		return nil, taskstore.ErrNotFound
	}
	return s.Get(ctx, id)
}

func (l *lazyFile) Update(ctx context.Context, id string, lim taskstore.Limits, change func(*taskstore.Task) error) (*taskstore.Task, error) {
	s, _ := l.opened(false)
	if s == nil {
		return nil, taskstore.ErrNotFound
	}
	return s.Update(ctx, id, lim, change)
}

func (l *lazyFile) Publish(ctx context.Context, id string) error {
	if s, _ := l.opened(false); s != nil {
		return s.Publish(ctx, id)
	}
	l.subs.Tell(id)
	return nil
}

func (l *lazyFile) Subscribe(f func(id string)) (stop func()) { return l.subs.Add(f) }

func (l *lazyFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.store == nil {
		return nil
	}
	return l.store.Close()
}
