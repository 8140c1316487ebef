package taskstore

import (
	"context"
	"sync"
	"time"
)

// memory is a Store in this process: the tasks die with it.
type memory struct {
	now func() time.Time

	mu      sync.Mutex
	tasks   map[string]*memTask
	byOwner map[string]int
	subs    Subscribers
	sweep   time.Time // when expired tasks were last dropped
}

type memTask struct {
	data    []byte // Encode of the task: what a Get copies
	owner   string
	expires time.Time
}

var _ Store = (*memory)(nil)

// NewMemory returns a Store that keeps its tasks in this process, for
// tests and toolc dev: they are lost when the process ends.
func NewMemory() Store {
	return &memory{now: time.Now, tasks: map[string]*memTask{}, byOwner: map[string]int{}}
}

func (m *memory) Create(_ context.Context, t *Task, lim Limits) error {
	data, err := Encode(t)
	if err != nil {
		return err
	}
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return ErrTooLarge
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if (lim.Total > 0 && len(m.tasks) >= lim.Total) || (lim.PerOwner > 0 && m.byOwner[t.Owner] >= lim.PerOwner) || now.Sub(m.sweep) > time.Minute {
		m.dropExpired(now)
	}
	if _, ok := m.tasks[t.ID]; ok {
		return ErrExists
	}
	if (lim.Total > 0 && len(m.tasks) >= lim.Total) || (lim.PerOwner > 0 && m.byOwner[t.Owner] >= lim.PerOwner) {
		return ErrTooMany
	}
	m.tasks[t.ID] = &memTask{data: data, owner: t.Owner, expires: t.Expires()}
	m.byOwner[t.Owner]++
	return nil
}

// dropExpired forgets the tasks whose TTL has ended. m.mu is held.
func (m *memory) dropExpired(now time.Time) {
	m.sweep = now
	for id, t := range m.tasks {
		if !now.Before(t.expires) {
			m.drop(id, t)
		}
	}
}

func (m *memory) drop(id string, t *memTask) {
	delete(m.tasks, id)
	if m.byOwner[t.owner]--; m.byOwner[t.owner] <= 0 {
		delete(m.byOwner, t.owner)
	}
}

// live returns the stored task with the id, dropping it if expired. m.mu
// is held.
func (m *memory) live(id string) (*memTask, bool) {
	t, ok := m.tasks[id]
	if !ok {
		return nil, false
	}
	if !m.now().Before(t.expires) {
		m.drop(id, t)
		return nil, false
	}
	return t, true
}

func (m *memory) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	t, ok := m.live(id)
	var data []byte
	if ok {
		data = t.data // replaced, never changed, by Update
	}
	m.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return Decode(data)
}

func (m *memory) Update(_ context.Context, id string, lim Limits, change func(*Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.live(id)
	if !ok {
		return nil, ErrNotFound
	}
	t, data, err := Apply(id, stored.data, m.now(), lim, change)
	if err != nil {
		return nil, err
	}
	stored.data, stored.expires = data, t.Expires()
	return t, nil
}

func (m *memory) Publish(_ context.Context, id string) error {
	m.subs.Tell(id)
	return nil
}

func (m *memory) Subscribe(f func(id string)) (stop func()) { return m.subs.Add(f) }

func (m *memory) Close() error { return nil }
