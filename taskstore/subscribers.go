package taskstore

import "sync"

// Subscribers are the functions a Store's Subscribe registered, which its
// Publish (or, for a shared store, the relay of other replicas' changes)
// hands each changed task's id. The zero value has none.
type Subscribers struct {
	mu   sync.Mutex
	fs   map[int]func(string)
	next int
}

// Add registers f until stop is called: Store.Subscribe.
func (s *Subscribers) Add(f func(id string)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fs == nil {
		s.fs = map[int]func(string){}
	}
	n := s.next
	s.next++
	s.fs[n] = f
	return func() {
		s.mu.Lock()
		delete(s.fs, n)
		s.mu.Unlock()
	}
}

// Tell calls every registered function with id, outside the lock, so that
// one may subscribe or stop as it runs.
func (s *Subscribers) Tell(id string) {
	s.mu.Lock()
	fs := make([]func(string), 0, len(s.fs))
	for _, f := range s.fs {
		fs = append(fs, f)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f(id)
	}
}
