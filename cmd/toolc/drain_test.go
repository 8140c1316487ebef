package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/testsync"
)

// callAnswer is what a /v1/call answered.
type callAnswer struct {
	ms     int
	status int
	text   string
	isErr  bool
	err    error
}

func postCall(url, name, args string) callAnswer {
	resp, err := http.Post(url+"/v1/call", "application/json", strings.NewReader(`{"name":"`+name+`","arguments":`+args+`}`))
	if err != nil {
		return callAnswer{err: err}
	}
	defer resp.Body.Close()
	var body struct {
		Content []struct{ Text string }
		IsError bool
		Error   string
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		return callAnswer{status: resp.StatusCode, err: fmt.Errorf("%v: %s", err, data)}
	}
	a := callAnswer{status: resp.StatusCode, isErr: body.IsError, text: body.Error}
	for _, c := range body.Content {
		a.text += c.Text
	}
	return a
}

// heldCalls holds the faulty plugin's sleep calls that name its
// directory (the hold argument) until the test releases them: each call
// says that it is in flight with a file of its own there, and sleeps its
// ms only after the release. A test that needs calls in flight at a
// moment of its choosing waits for them to say so, instead of guessing how
// long they take to arrive on a loaded machine.
type heldCalls struct{ dir string }

func newHeldCalls(t *testing.T) *heldCalls { return &heldCalls{dir: t.TempDir()} }

// args are the sleep tool's arguments for a held call of ms.
func (h *heldCalls) args(ms int) string {
	data, _ := json.Marshal(map[string]any{"ms": ms, "hold": h.dir})
	return string(data)
}

// waitStarted waits until n calls are in their handler.
func (h *heldCalls) waitStarted(t *testing.T, n int) {
	t.Helper()
	testsync.WaitFor(t, time.Minute, fmt.Sprintf("%d held calls in their handler", n), func() bool {
		started, _ := filepath.Glob(filepath.Join(h.dir, "started-*"))
		return len(started) >= n
	})
}

// release lets the held calls go on to sleep.
func (h *heldCalls) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServeDrainsOnSIGTERM: calls in flight when toolc serve gets SIGTERM
// finish within the grace period; one that runs past it is told so, not
// that its handler is being restarted; a call that arrives during the
// drain is refused with 503. TOOLC_DRAIN_CALLS adds that many short calls
// to the ones in flight, for the figures in BENCHMARKS.md.
//
// The calls are held in their handler until after SIGTERM and the late
// call, so every one is in flight at SIGTERM however slowly it arrived;
// their sleeps start at the release. The grace periods leave seconds
// between the longest call that must finish and the end of the grace, as
// the release and the answers take their time on a loaded machine: the
// grace is the behaviour under test, and a call meant to finish within it
// must not miss it by a scheduling delay.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	extra := 20
	if v := os.Getenv("TOOLC_DRAIN_CALLS"); v != "" {
		fmt.Sscan(v, &extra)
	}
	for _, tc := range []struct {
		name  string
		grace string
		// calls are the sleeps in flight at SIGTERM, in ms; over are those
		// that run past the grace period.
		calls []int
		over  map[int]bool
	}{
		{name: "all within the grace period", grace: "15s", calls: []int{3000, 8000}},
		{name: "one past the grace period", grace: "5s", calls: []int{1000, 600000}, over: map[int]bool{600000: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd, url, stderr := startServeHTTP(t, "--grace", tc.grace, faultyPattern)
			held := newHeldCalls(t)
			calls := tc.calls
			if tc.over == nil {
				for i := range extra {
					calls = append(calls, 200+i*2500/max(extra, 1))
				}
			}
			answers := make(chan callAnswer, len(calls))
			var wg sync.WaitGroup
			for _, ms := range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					a := postCall(url, "sleep", held.args(ms))
					a.ms = ms
					answers <- a
				}()
			}
			held.waitStarted(t, len(calls))
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			// A call that arrives during the drain is refused.
			testsync.WaitFor(t, 5*time.Second, "the drain to begin", func() bool { return strings.Contains(stderr.String(), "shutting down") })
			if a := postCall(url, "echo", `{"text":"late"}`); a.status != http.StatusServiceUnavailable || !strings.Contains(a.text, "shutting down") {
				t.Errorf("a call during the drain = %+v, want 503 saying the server is shutting down", a)
			}
			held.release(t)
			wg.Wait()
			close(answers)
			lost := 0
			for a := range answers {
				switch {
				case a.err != nil:
					lost++
					t.Errorf("the %dms call failed: %v", a.ms, a.err)
				case tc.over[a.ms]:
					want := "was stopped before the call finished: the server is shutting down, and the call ran past the grace period of " + tc.grace
					if !a.isErr || !strings.Contains(a.text, want) || strings.Contains(a.text, "restart") {
						t.Errorf("the %dms call past the grace period = %+v, want a tool error saying %q", a.ms, a, want)
					}
				case a.isErr || a.text != fmt.Sprintf("slept %dms", a.ms):
					lost++
					t.Errorf("the %dms call in flight at SIGTERM = %+v", a.ms, a)
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("toolc serve exited with %v", err)
			}
			took := time.Since(sent)
			want := fmt.Sprintf("shutting down: %d calls in flight", len(calls))
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			if strings.Contains(stderr.String(), "restart") {
				t.Errorf("stderr speaks of a restart:\n%s", stderr.String())
			}
			t.Logf("grace %s: %d calls in flight at SIGTERM, %d past the grace period, %d lost; toolc exited %s after SIGTERM",
				tc.grace, len(calls), len(tc.over), lost, took.Round(time.Millisecond))
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr.String())
			}
		})
	}
}

// TestServeStdioDrainsOnSIGTERM: over stdio too, a call in flight at
// SIGTERM is answered before the session ends.
func TestServeStdioDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	cmd := toolcCmd(t, "serve", "--stdio", "--grace", "10s", faultyPattern)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // the first run builds the plugin
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to toolc serve --stdio: %v\nstderr:\n%s", err, stderr.String())
	}
	defer session.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answers := make(chan answer, 1)
	held := newHeldCalls(t)
	go func() {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: mcpToolName(t, faultyMCPTools(t), "sleep"), Arguments: map[string]any{"ms": 1500, "hold": held.dir}})
		answers <- answer{res, err}
	}()
	// The call sleeps only once released, after SIGTERM: it is in flight
	// then, however long it took to arrive.
	held.waitStarted(t, 1)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testsync.WaitFor(t, 10*time.Second, "the drain to begin", func() bool { return strings.Contains(stderr.String(), "shutting down") })
	held.release(t)
	a := <-answers
	if a.err != nil {
		t.Fatalf("the call in flight at SIGTERM: %v\nstderr:\n%s", a.err, stderr.String())
	}
	if a.res.IsError || resultText(a.res) != "slept 1500ms" {
		t.Errorf("the call in flight at SIGTERM = %q (error %t)", resultText(a.res), a.res.IsError)
	}
	testsync.WaitFor(t, 10*time.Second, "toolc to exit", func() bool { return strings.Contains(stderr.String(), "every call in flight finished") })
	if !strings.Contains(stderr.String(), "shutting down: 1 call in flight") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
