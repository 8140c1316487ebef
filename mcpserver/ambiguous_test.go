package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestAmbiguousBodiesLookTheSame: a body whose keys readers could take for
// different messages (a key twice, or two keys of the message or its
// params that differ only in case) is refused with 400 before anything
// reads it, so that a check in front of go-sdk and go-sdk cannot judge
// different tools: {"name":"vault_open","NAME":"x"} made toolc's scope
// check (which read "NAME" as name, as encoding/json does) miss that
// vault_open is hidden, and go-sdk's header check then answered for it
// where it answers nothing for an unknown tool. Every answer about the
// hidden tool is the unknown tool's, byte for byte, and no handler runs.
func TestAmbiguousBodiesLookTheSame(t *testing.T) {
	var r ran
	rt := testRuntime(t, &r)
	iss := newTestIssuer(t)
	ts := serveMCP(t, rt, HTTPOptions{OAuth: iss.verifier(t)})
	outsider := "Bearer " + iss.token(t, "mallory", "other:scope")
	hidden := mcpNameOf(t, rt, "open")
	unknown := strings.Replace(hidden, "open", "xpen", 1) // one length: one Content-Length
	for _, tc := range []struct {
		name, params string // params with @ for the tool's name
		envelope     string // more keys of the message
		code         int    // of the refusal; 0 for none
	}{
		{"NAME after name", `{"name":"@","NAME":"x","arguments":{"door":"d"}}`, "", jsonrpc.CodeInvalidParams},
		{"NAME before name", `{"NAME":"x","name":"@","arguments":{"door":"d"}}`, "", jsonrpc.CodeInvalidParams},
		{"Name and nAme", `{"Name":"@","nAme":"@","arguments":{"door":"d"}}`, "", jsonrpc.CodeInvalidParams},
		{"name twice", `{"name":"x","name":"@","arguments":{"door":"d"}}`, "", jsonrpc.CodeInvalidParams},
		{"name twice, escaped", `{"name":"@","n\u0061me":"x","arguments":{"door":"d"}}`, "", jsonrpc.CodeInvalidParams},
		{"arguments and argumentſ", `{"name":"@","arguments":{"door":"d"},"argumentſ":{"door":"x"}}`, "", jsonrpc.CodeInvalidParams},
		{"method and METHOD", `{"name":"@","arguments":{"door":"d"}}`, `,"METHOD":"ping"`, jsonrpc.CodeInvalidRequest},
		{"params and Params", `{"name":"@","arguments":{"door":"d"}}`, `,"Params":{"name":"x"}`, jsonrpc.CodeInvalidRequest},
		{"params and paramſ", `{"name":"@","arguments":{"door":"d"}}`, `,"paramſ":{"name":"x"}`, jsonrpc.CodeInvalidRequest},
		{"id and ID", `{"name":"@","arguments":{"door":"d"}}`, `,"ID":8`, jsonrpc.CodeInvalidRequest},
		{"Name alone", `{"Name":"@","arguments":{"door":"d"}}`, "", 0},
	} {
		answer := func(name string) (answer, string) {
			params := `{"_meta":` + meta2026 + `,` + strings.ReplaceAll(tc.params[1:], "@", name)
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + params + tc.envelope + `}`
			a := postMCP(t, ts.URL, body, header2026("tools/call", name, "Authorization", outsider))
			return a, fmt.Sprintf("%d %s", a.status, a.raw)
		}
		h, hraw := answer(hidden)
		_, uraw := answer(unknown)
		if strings.ReplaceAll(hraw, hidden, unknown) != uraw {
			t.Errorf("%s: the hidden tool's answer differs from the unknown tool's:\nhidden:  %s\nunknown: %s", tc.name, hraw, uraw)
		}
		if tc.code != 0 && (h.status != http.StatusBadRequest || h.Error == nil || h.Error.Code != tc.code || string(h.ID) != "7") {
			t.Errorf("%s: %s, want 400 and %d for id 7", tc.name, hraw, tc.code)
		}
		if got := r.take(); len(got) > 0 {
			t.Errorf("%s: ran %q", tc.name, got)
		}
	}

	// Without OAuth too: one tool's name, and another's in capitals.
	ts = serveMCP(t, rt, HTTPOptions{})
	ping, route := mcpNameOf(t, rt, "ping"), mcpNameOf(t, rt, "route")
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + ping + `","NAME":"` + route + `","arguments":{"region":"us"},"_meta":` + meta2026 + `}}`
	if a := postMCP(t, ts.URL, body, header2026("tools/call", ping)); a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("name and NAME: %d %s, want 400 and -32602", a.status, a.raw)
	}
	if got := r.take(); len(got) > 0 {
		t.Errorf("ran %q", got)
	}

	// go-sdk reads the first message of a body and lets what follows
	// pass; encoding/json refuses the body: it is refused.
	for _, tail := range []string{` {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"` + route + `","arguments":{"region":"us"}}}`, "\x00"} {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + ping + `","arguments":{},"_meta":` + meta2026 + `}}` + tail
		if a := postMCP(t, ts.URL, body, header2026("tools/call", ping)); a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != jsonrpc.CodeParseError {
			t.Errorf("a message and %q: %d %s, want 400 and -32700", tail, a.status, a.raw)
		}
	}
	if got := r.take(); len(got) > 0 {
		t.Errorf("ran %q", got)
	}
}

// stdioLines drives a session over NewStdioTransport line by line.
type stdioLines struct {
	in   io.WriteCloser
	mu   sync.Mutex
	out  []string
	more chan struct{}
}

func newStdioLines(t *testing.T, r *ran) *stdioLines {
	t.Helper()
	rt := testRuntime(t, r)
	srv := New(rt, Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &stdioLines{in: inW, more: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() { srv.Run(ctx, NewStdioTransport(inR, outW)); outW.Close(); close(done) }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.out = append(s.out, sc.Text())
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		if r.wait != nil {
			select {
			case <-r.wait:
			default:
				close(r.wait)
			}
		}
		inW.Close()
		cancel()
		<-done
	})
	return s
}

func (s *stdioLines) send(t *testing.T, line string) {
	t.Helper()
	if _, err := s.in.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
}

// await returns the first line written that holds each of want, waiting
// for it up to 10 seconds.
func (s *stdioLines) await(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		for _, l := range s.out {
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			if all {
				s.mu.Unlock()
				return l
			}
		}
		written := strings.Join(s.out, "\n")
		s.mu.Unlock()
		select {
		case <-s.more:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no line with %q; the server wrote:\n%s", want, written)
		}
	}
}

// TestStdioAmbiguousAndReusedIDs: stdio refuses what /mcp refuses, with
// the same filter: a key twice or two keys that differ only in case, so
// {"name":"a","name":"b"} no longer runs b. A request, alone or in a
// batch, that reuses the ID of a request still in flight is refused with
// -32600 and runs nothing, and the request in flight still gets its own
// answer (go-sdk gave it to the batch).
func TestStdioAmbiguousAndReusedIDs(t *testing.T) {
	r := ran{wait: make(chan struct{})}
	s := newStdioLines(t, &r)
	s.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.await(t, `"id":"init"`)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ping, route, wait := "svc_ping", "svc_route", "svc_wait"

	s.send(t, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"`+ping+`","name":"`+route+`","arguments":{"region":"us"}}}`)
	if l := s.await(t, `"id":10`); !strings.Contains(l, `"code":-32602`) || !strings.Contains(l, "params.name is given twice") {
		t.Errorf("name twice: %s", l)
	}
	s.send(t, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"`+ping+`","NAME":"`+route+`","arguments":{}}}`)
	if l := s.await(t, `"id":11`); !strings.Contains(l, `"code":-32602`) || !strings.Contains(l, "differ only in case") {
		t.Errorf("name and NAME: %s", l)
	}
	s.send(t, `[{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"`+route+`","arguments":{"region":"us"}},"METHOD":"ping"}]`)
	if l := s.await(t, "METHOD"); !strings.Contains(l, `"code":-32600`) {
		t.Errorf("method and METHOD in a batch: %s", l)
	}

	s.send(t, `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"`+wait+`","arguments":{"text":"first"}}}`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		started := len(r.args) > 0
		r.mu.Unlock()
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call of wait did not start")
		}
	}
	s.send(t, `[{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"`+ping+`","arguments":{"text":"second"}}}]`)
	if l := s.await(t, "request ID 20 is in use"); !strings.Contains(l, `"code":-32600`) {
		t.Errorf("a batch reusing an ID in flight: %s", l)
	}
	s.send(t, `{"jsonrpc":"2.0","id":20,"method":"ping"}`)
	s.await(t, "request ID 20 is in use by a request in flight")
	close(r.wait)
	if l := s.await(t, `"id":20,"result"`); !strings.Contains(l, "first") {
		t.Errorf("the call in flight was answered %s", l)
	}
	s.send(t, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	s.await(t, `"id":"last"`)
	if got := r.take(); len(got) != 1 || !strings.HasPrefix(got[0], "wait ") {
		t.Errorf("ran %q, want wait alone", got)
	}
}
