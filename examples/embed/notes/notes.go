// Package notes is the notes service's tools: the contract (notes.cue),
// the Go API that toolc gen go generates from it (tools_gen.go), and its
// implementation. It is a library, so toolc gen go writes Serve into the
// handler, ./plugin, and not here: a service that imports this package to
// run the tools in process (examples/embed) links no plugin protocol.
package notes

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// notes implements the notes contract (Tools, in tools_gen.go). The
// runtime calls it from many goroutines at once, so a mutex guards it.
type notes struct {
	mu    sync.Mutex
	notes []note // in the order added; a note's id is its index plus one
}

type note struct{ title, text string }

// New returns an implementation of the tools with no notes yet.
func New() Tools { return &notes{} }

// AddNote saves a note. The runtime has checked the title's length, and
// filled in text's default, "", before it runs.
func (n *notes) AddNote(_ context.Context, req AddNoteRequest) (*AddNoteResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, note{req.Title, req.Text})
	return &AddNoteResponse{ID: len(n.notes)}, nil
}

// FindNotes returns up to req.Limit notes (10 unless the caller says)
// that contain req.Query, newest first.
func (n *notes) FindNotes(_ context.Context, req FindNotesRequest) (*FindNotesResponse, error) {
	q := strings.ToLower(req.Query)
	n.mu.Lock()
	defer n.mu.Unlock()
	var res FindNotesResponse
	for i, nt := range slices.Backward(n.notes) {
		if len(res.IDs) == req.Limit {
			break
		}
		if strings.Contains(strings.ToLower(nt.title), q) || strings.Contains(strings.ToLower(nt.text), q) {
			res.IDs = append(res.IDs, i+1)
			res.Titles = append(res.Titles, nt.title)
		}
	}
	return &res, nil
}
