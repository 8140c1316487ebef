package mcpserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestSessionCapBusy: past the cap, a new session closes the least
// recently used idle one (with a DELETE, as a client would), never one
// with a request in flight; when every session has one, initialize gets
// 503 and nothing is closed.
func TestSessionCapBusy(t *testing.T) {
	var (
		mu      sync.Mutex
		n       int
		deleted []string
	)
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case id == "":
			mu.Lock()
			n++
			w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", n))
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodDelete:
			mu.Lock()
			deleted = append(deleted, id)
			mu.Unlock()
		default: // a call in flight
			started <- struct{}{}
			<-release
		}
	})
	c := newSessionCap(next, 2, 0, nil, nil)
	do := func(method, id string) int {
		r := httptest.NewRequest(method, "/mcp", nil)
		if id != "" {
			r.Header.Set("Mcp-Session-Id", id)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		return w.Code
	}
	do("POST", "")
	do("POST", "")
	var calls sync.WaitGroup
	for _, id := range []string{"s1", "s2"} {
		calls.Add(1)
		go func() { defer calls.Done(); do("POST", id) }()
		<-started
	}
	if code := do("POST", ""); code != http.StatusServiceUnavailable {
		t.Errorf("initialize with every session busy: %d, want 503", code)
	}
	close(release)
	calls.Wait()
	do("POST", "s2") // s1 is now the least recently used
	if code := do("POST", ""); code != http.StatusOK {
		t.Errorf("initialize with idle sessions: %d, want 200", code)
	}
	// The cap closes it beside the initialize (see opened).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(deleted)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deleted) != 1 || deleted[0] != "s1" {
		t.Errorf("closed %v, want [s1], the least recently used", deleted)
	}
}

// TestSessionDeleteEndsQuestionsOfItsUser: a DELETE gives up the
// session's questions, and the cap forgets the session, only when go-sdk
// will honour it, from the session's own OAuth user; another user's
// DELETE (which go-sdk refuses with 403) leaves the session as it was,
// counted by the cap and its questions waiting.
func TestSessionDeleteEndsQuestionsOfItsUser(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", "s1")
		}
		w.WriteHeader(http.StatusOK)
	})
	var ended []string
	c := newSessionCap(next, 10, 0, nil, func(id string) { ended = append(ended, id) })
	as := func(user, method, id string) {
		r := httptest.NewRequest(method, "/mcp", nil)
		if id != "" {
			r.Header.Set("Mcp-Session-Id", id)
		}
		asSessionUser(c, user, r).ServeHTTP(httptest.NewRecorder(), r)
	}
	as("alice", "POST", "") // opens s1 for alice
	as("mallory", "DELETE", "s1")
	if len(ended) != 0 {
		t.Fatalf("another user's DELETE ended the questions of %v", ended)
	}
	if !c.ownedBy("s1", "alice") {
		t.Fatal("another user's DELETE made the cap forget the session")
	}
	as("alice", "DELETE", "s1")
	if len(ended) != 1 || ended[0] != "s1" {
		t.Fatalf("the session's own DELETE ended the questions of %v, want [s1]", ended)
	}
}
