package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The session path (sessdirect.go) is held to go-sdk's answers: the same
// request, sent in a session of an endpoint with the path and in one of an
// endpoint without it over the same server, must get the same status,
// headers and body.

// waiter is a dispatcher whose tool w_wait runs until release closes or
// its call is cancelled, and says which.
type waiter struct {
	started chan struct{}
	release chan struct{}
}

func (waiter) Tools() []string { return []string{"wait"} }

func (w waiter) Call(ctx context.Context, _, _ string, _ json.RawMessage, _ func(runtime.Event)) (*runtime.Result, error) {
	w.started <- struct{}{}
	select {
	case <-w.release:
		return plugins.Text("released"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sessionPair returns two handlers of one server, with the session path
// and without it, as directPair does, and the path. opts are the
// endpoint's options (no OAuth).
func sessionPair(t testing.TB, opts HTTPOptions) (direct, sdk http.Handler, p *sessionPath, w waiter) {
	t.Helper()
	rt := runtime.New(runtime.Options{})
	cat := directCatalog()
	// u_mirror is an upstream server's tool (the bridge keeps its call
	// open between rounds), served here by the script.
	cat.Services = append(cat.Services, &catalog.Service{Name: "u", Version: "1.0.0", Description: "An upstream server's tools",
		Upstream: &catalog.Upstream{Command: []string{"upstream"}},
		Tools:    []*catalog.Tool{{Name: "mirror", Description: "Mirror", Request: catalog.Message{}}}})
	cat.Seal()
	dispatchers := map[string]runtime.Dispatcher{"d": scripted{}, "u": mirror{}}
	if _, fuzzing := t.(*testing.F); !fuzzing { // the fuzzer's calls of w_wait would never end
		cat.Services = append(cat.Services, &catalog.Service{Name: "w", Version: "1.0.0", Description: "A tool that waits",
			Tools: []*catalog.Tool{{Name: "wait", Description: "Wait", Request: catalog.Message{}}}})
		cat.Seal()
		w = waiter{started: make(chan struct{}, 4), release: make(chan struct{})}
		dispatchers["w"] = w
	}
	if _, err := rt.Swap(cat, dispatchers); err != nil {
		t.Fatal(err)
	}
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	e := newMCPEndpoint(rt, srv, opts)
	if e.sessionCap == nil || e.sessionCap.path == nil {
		t.Fatal("no session path")
	}
	direct = rejectAmbiguous(newStreamGuard(e, opts))
	opts.noDirect = true
	sdk = NewHTTPHandler(rt, srv, opts)
	return direct, sdk, e.sessionCap.path, w
}

// mirror serves u_mirror: it answers with its arguments.
type mirror struct{ scripted }

func (mirror) Tools() []string { return []string{"mirror"} }

// legacyHeader are the headers of a request in the session id.
func legacyHeader(id string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", "2025-11-25")
	if id != "" {
		h.Set("Mcp-Session-Id", id)
	}
	return h
}

// openSession opens a session of h with initialize at revision, with the
// client capabilities caps, and sends the requests of setup in it (the
// initialized notification, unless setup is nil). It returns the
// session's ID, "" if there is none.
func openSession(t testing.TB, h http.Handler, revision, caps string, setup []string) string {
	t.Helper()
	hd := legacyHeader("")
	hd.Del("MCP-Protocol-Version")
	x := send(h, hd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+revision+`","capabilities":`+caps+`,"clientInfo":{"name":"c","version":"1"}}}`)
	id := x.header.Get("Mcp-Session-Id")
	if setup == nil {
		setup = []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	}
	for _, body := range setup {
		send(h, legacyHeader(id), body)
	}
	return id
}

// sessionCase is a request in a session, and whether the path answers it.
type sessionCase struct {
	name string
	// revision and caps of the session's initialize (2025-11-25 and {}
	// when empty), and the requests after it (notifications/initialized
	// when nil).
	revision, caps string
	setup          []string
	header         func(http.Header) // changes to legacyHeader, or nil
	body           string
	direct         bool
	timeout        time.Duration // of the request; 0: none
}

func legacyCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

var sessionCases = []sessionCase{
	{name: "call", body: legacyCall("7", "d_echo", `{"text":"hi"}`), direct: true},
	{name: "call, string id", body: legacyCall(`"a-1"`, "d_echo", `{"text":"hi"}`), direct: true},
	{name: "call, float id", body: legacyCall("1.5", "d_echo", `{}`), direct: true},
	{name: "call, default applied", body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "call, no arguments", body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"d_echo"}}`, direct: true},
	{name: "call, string arguments", body: legacyCall("1", "d_echo", `"{\"text\":\"x\"}"`), direct: true},
	{name: "call, invalid arguments", body: legacyCall("1", "d_echo", `{"text":5}`), direct: true},
	{name: "call, unknown argument", body: legacyCall("1", "d_echo", `{"txt":"a"}`), direct: true},
	{name: "call, null arguments", body: legacyCall("1", "d_echo", `null`), direct: true},
	{name: "call, rich result", body: legacyCall("1", "d_rich", `{"text":"<x>"}`), direct: true},
	{name: "call, handler fails", body: legacyCall("1", "d_fail", `{}`), direct: true},
	{name: "call, empty result", body: legacyCall("1", "d_empty", `{}`), direct: true},

	{name: "call, missing capability", body: legacyCall("1", "d_missing", `{}`), direct: true},
	{name: "call, 2025-06-18", revision: "2025-06-18", header: func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-06-18") }, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "call, 2025-03-26", revision: "2025-03-26", header: func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-03-26") }, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "call, before initialized", setup: []string{}, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "call, Mcp-Name of another tool", header: func(h http.Header) { h.Set("Mcp-Name", "d_rich") }, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "experimental", caps: `{"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, body: legacyCall("1", "d_echo", `{}`), direct: true},
	// go-sdk's.
	{name: "call, questions the client cannot answer", body: legacyCall("1", "d_ask", `{}`)},
	// A client that can be asked: the path runs a handler's first round,
	// and a handler that asks is go-sdk's from the start.
	{name: "elicitation", caps: `{"elicitation":{}}`, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "elicitation, questions", caps: `{"elicitation":{}}`, body: legacyCall("1", "d_ask", `{}`), timeout: time.Second}, // go-sdk waits for the answer
	{name: "sampling", caps: `{"sampling":{}}`, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "sampling, questions", caps: `{"sampling":{}}`, body: legacyCall("1", "d_ask", `{}`)},
	{name: "roots", caps: `{"roots":{}}`, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "roots, list changed", caps: `{"roots":{"listChanged":true}}`, body: legacyCall("1", "d_echo", `{}`), direct: true},
	{name: "upstream tool", body: legacyCall("1", "u_mirror", `{}`), direct: true},
	// An upstream tool's first round may not run twice.
	{name: "upstream tool, roots", caps: `{"roots":{"listChanged":true}}`, body: legacyCall("1", "u_mirror", `{}`)},
	{name: "upstream tool, elicitation", caps: `{"elicitation":{}}`, body: legacyCall("1", "u_mirror", `{}`)},
	{name: "call, progress token", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d_echo","arguments":{},"_meta":{"progressToken":1}}}`},
	{name: "call, empty _meta", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d_echo","arguments":{},"_meta":{}}}`},
	{name: "call, 2026-07-28 _meta", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d_echo","arguments":{},"_meta":` + plainMeta2026 + `}}`},
	{name: "call, requestState", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d_echo","requestState":"x"}}`},
	{name: "call, unknown tool", body: legacyCall("1", "nope", `{}`)},
	{name: "call, header tool", body: legacyCall("1", "d_hdr", `{"text":"a"}`)},
	{name: "call, task tool", body: legacyCall("1", "d_job", `{}`)},
	{name: "call, null id", body: legacyCall("null", "d_echo", `{}`)},
	{name: "call, no params", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
	{name: "notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"d_echo"}}`},
	{name: "batch", body: `[` + legacyCall("1", "d_echo", `{}`) + `]`},
	{name: "batch, 2025-03-26", revision: "2025-03-26", header: func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-03-26") }, body: `[` + legacyCall("1", "d_echo", `{}`) + `,` + legacyCall("2", "d_echo", `{}`) + `]`},
	{name: "list, first", body: `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`}, // go-sdk makes it, the path keeps it
	{name: "list, cursor", body: `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"x"}}`},
	{name: "list, _meta", body: `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`},
	{name: "list, null params", body: `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":null}`},
	{name: "list, first at 2025-06-18", revision: "2025-06-18", header: func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-06-18") }, body: `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`},
	{name: "not JSON", body: `{"jsonrpc":`},
	{name: "no revision header", header: func(h http.Header) { h.Del("MCP-Protocol-Version") }, body: legacyCall("1", "d_echo", `{}`)},
	{name: "Accept JSON only", header: func(h http.Header) { h.Set("Accept", "application/json") }, body: legacyCall("1", "d_echo", `{}`)},
	{name: "text/plain", header: func(h http.Header) { h.Set("Content-Type", "text/plain") }, body: legacyCall("1", "d_echo", `{}`)},
	{name: "Last-Event-ID", header: func(h http.Header) { h.Set("Last-Event-ID", "1") }, body: legacyCall("1", "d_echo", `{}`)},
	{name: "unknown session", header: func(h http.Header) { h.Set("Mcp-Session-Id", "nope") }, body: legacyCall("1", "d_echo", `{}`)},
	{name: "closed session", setup: []string{"DELETE"}, body: legacyCall("1", "d_echo", `{}`)},
	{name: "log level", setup: []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`}, body: legacyCall("1", "d_echo", `{}`)},
	{name: "initialize at 2026-07-28", revision: "2026-07-28", body: legacyCall("1", "d_echo", `{}`)},
	{name: "failed initialize", caps: `5`, body: legacyCall("1", "d_echo", `{}`)},
	// The path's, once go-sdk has made the list (above).
	{name: "list", body: `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, direct: true},
	{name: "list, empty params", body: `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{}}`, direct: true},
	{name: "list, 2025-06-18", revision: "2025-06-18", header: func(h http.Header) { h.Set("MCP-Protocol-Version", "2025-06-18") }, body: `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, direct: true},
	{name: "list, header of another revision", revision: "2025-06-18", body: `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`},
}

// run opens the case's session on h and sends its request there.
func (tc sessionCase) run(t testing.TB, h http.Handler) httpAnswer {
	t.Helper()
	revision, caps := tc.revision, tc.caps
	if revision == "" {
		revision = "2025-11-25"
	}
	if caps == "" {
		caps = "{}"
	}
	var setup []string
	deleted := false
	for _, s := range tc.setup {
		if s == "DELETE" {
			deleted = true
		} else {
			setup = append(setup, s)
		}
	}
	if tc.setup != nil && setup == nil {
		setup = []string{}
	}
	id := openSession(t, h, revision, caps, setup)
	hd := legacyHeader(id)
	if deleted {
		req := httptest.NewRequest("DELETE", "/mcp", nil)
		req.Header = hd.Clone()
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if tc.header != nil {
		tc.header(hd)
	}
	// A request that waits for the client (a question to a client that
	// declared elicitation, subscriptions/listen) ends with its request:
	// the fuzzer's are cut short.
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if tc.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, tc.timeout)
	}
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", "/mcp", strings.NewReader(tc.body))
	req.Header = hd
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return normal(httpAnswer{w.Code, w.Header(), w.Body.String(), ctx.Err() != nil})
}

// compareSession runs tc on both handlers and fails unless the answers are
// the same; it reports whether the path answered.
func compareSession(t testing.TB, direct, sdk http.Handler, p *sessionPath, tc sessionCase) bool {
	t.Helper()
	before := p.answered.Load()
	got := tc.run(t, direct)
	answered := p.answered.Load() != before
	want := tc.run(t, sdk)
	if got.late || want.late {
		return answered // timing decides what a request cut short gets
	}
	if strings.HasPrefix(strings.TrimSpace(tc.body), "[") {
		// go-sdk answers the calls of a batch as each ends, in any order.
		got.body, want.body = sortedEvents(got.body), sortedEvents(want.body)
	}
	if got.status != want.status || fmt.Sprint(got.header) != fmt.Sprint(want.header) || got.body != want.body {
		t.Fatalf("%s\nsession path (answered: %v): %d %v\n%q\ngo-sdk: %d %v\n%q", tc.body, answered, got.status, got.header, got.body, want.status, want.header, want.body)
	}
	return answered
}

// sortedEvents returns the SSE events of body in order.
func sortedEvents(body string) string {
	events := strings.SplitAfter(body, "\n\n")
	slices.Sort(events)
	return strings.Join(events, "")
}

// TestSessionPathIsGoSDK sends each of sessionCases in a session of each
// handler: the answers are the same bytes, and the path answers the cases
// it should and leaves the others to go-sdk.
func TestSessionPathIsGoSDK(t *testing.T) {
	direct, sdk, p, _ := sessionPair(t, HTTPOptions{})
	for _, tc := range sessionCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := compareSession(t, direct, sdk, p, tc); got != tc.direct {
				t.Errorf("the session path answered: %v, want %v", got, tc.direct)
			}
		})
	}
}

// TestSessionPathStandsAside: with an event store (SSE polling), without
// sessions, or with the direct path off, there is no session path.
func TestSessionPathStandsAside(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []HTTPOptions{{SSEPollAfter: time.Second}, {noDirect: true}, {Stateless: true}} {
		e := newMCPEndpoint(rt, New(rt, Options{}), opts)
		if e.sessionCap != nil && e.sessionCap.path != nil {
			t.Errorf("%+v: a session path", opts)
		}
	}
}

// inFlight starts a call of w_wait with id in the session of h, and
// returns its answer once it ends.
func inFlight(t *testing.T, h http.Handler, session, id string, w waiter) <-chan httpAnswer {
	t.Helper()
	out := make(chan httpAnswer, 1)
	go func() { out <- normal(send(h, legacyHeader(session), legacyCall(id, "w_wait", `{}`))) }()
	select {
	case <-w.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not start")
	}
	return out
}

// TestSessionPathInFlight: a call with the ID of one in flight gets
// go-sdk's duplicate error, and notifications/cancelled cancels a call,
// on the path as at go-sdk.
func TestSessionPathInFlight(t *testing.T) {
	direct, sdk, p, w := sessionPair(t, HTTPOptions{})
	var dup, cancelled [2]httpAnswer
	for i, h := range []http.Handler{direct, sdk} {
		session := openSession(t, h, "2025-11-25", "{}", nil)
		first := inFlight(t, h, session, "5", w)
		dup[i] = normal(send(h, legacyHeader(session), legacyCall("5", "d_echo", `{}`)))
		send(h, legacyHeader(session), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
		select {
		case cancelled[i] = <-first:
		case <-time.After(30 * time.Second):
			t.Fatal("the cancelled call did not end")
		}
	}
	if p.answered.Load() != 2 {
		t.Errorf("the path answered %d requests, want 2 (the call and its duplicate)", p.answered.Load())
	}
	if fmt.Sprint(dup[0]) != fmt.Sprint(dup[1]) || dup[0].status != http.StatusBadRequest {
		t.Errorf("duplicate ID:\nsession path: %v\ngo-sdk: %v", dup[0], dup[1])
	}
	if fmt.Sprint(cancelled[0]) != fmt.Sprint(cancelled[1]) {
		t.Errorf("cancelled:\nsession path: %v\ngo-sdk: %v", cancelled[0], cancelled[1])
	}

	// A request to go-sdk with the ID of a call on the path waits for it.
	session := openSession(t, direct, "2025-11-25", "{}", nil)
	first := inFlight(t, direct, session, "6", w)
	second := make(chan httpAnswer, 1)
	go func() {
		second <- normal(send(direct, legacyHeader(session), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"d_echo","_meta":{"progressToken":1}}}`))
	}()
	select {
	case x := <-second:
		t.Fatalf("go-sdk answered a call whose ID is in flight on the path: %v", x)
	case <-time.After(100 * time.Millisecond):
	}
	close(w.release)
	if x := <-first; !strings.Contains(x.body, "released") {
		t.Errorf("the first call: %v", x)
	}
	if x := <-second; !strings.Contains(x.body, `"result"`) {
		t.Errorf("the second call: %v", x)
	}
}

// TestSessionPathKeepsSessionsAlive: calls on the path keep their session
// open past the idle timeout, as calls through go-sdk do, and the
// session closes once idle for it.
func TestSessionPathKeepsSessionsAlive(t *testing.T) {
	const idle = time.Second
	direct, _, p, _ := sessionPair(t, HTTPOptions{SessionIdleTimeout: idle})
	session := openSession(t, direct, "2025-11-25", "{}", nil)
	for end := time.Now().Add(3 * idle); time.Now().Before(end); time.Sleep(idle / 10) {
		if x := send(direct, legacyHeader(session), legacyCall("1", "d_echo", `{}`)); x.status != http.StatusOK {
			t.Fatalf("a call %v into a session in use: %v", time.Until(end), x)
		}
	}
	if p.answered.Load() == 0 {
		t.Fatal("the path answered no call")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(idle)
		x := send(direct, legacyHeader(session), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if x.status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session is still open: %v", x)
		}
	}
}

// FuzzSessionPath sends the same request in a session of each handler:
// the answers are the same bytes, whichever path answered. The seeds are
// sessionCases; the fuzzer varies the body, the headers that decide the
// path and the client's capabilities.
func FuzzSessionPath(f *testing.F) {
	for _, tc := range sessionCases {
		h := legacyHeader("x")
		if tc.header != nil {
			tc.header(h)
		}
		f.Add(tc.body, h.Get("MCP-Protocol-Version"), h.Get("Accept"), h.Get("Content-Type"), cmp.Or(tc.caps, "{}"))
	}
	direct, sdk, p, _ := sessionPair(f, HTTPOptions{})
	var mu sync.Mutex // one case at a time: the sessions' states are compared
	f.Fuzz(func(t *testing.T, body, version, accept, contentType, caps string) {
		mu.Lock()
		defer mu.Unlock()
		// A request that waits for the client (a question to a client of
		// elicitation) waits out its timeout on both handlers: the fuzz
		// engine takes a few such inputs in a row for a hung worker.
		tc := sessionCase{caps: caps, body: body, timeout: 300 * time.Millisecond, header: func(h http.Header) {
			for k, v := range map[string]string{"MCP-Protocol-Version": version, "Accept": accept, "Content-Type": contentType} {
				h.Del(k)
				if v != "" && !strings.ContainsAny(v, "\r\n\x00") {
					h.Set(k, v)
				}
			}
		}}
		compareSession(t, direct, sdk, p, tc)
	})
}

// TestSessionPathServesRealClients: go-sdk's client, in 2025-11-25
// sessions over a loopback listener, has its plain calls answered on the
// path, whatever it declares; a call whose handler asks a question is
// go-sdk's, and the question reaches the client; a call of an upstream
// tool is the path's only for a client that cannot be asked.
func TestSessionPathServesRealClients(t *testing.T) {
	direct, _, p, _ := sessionPair(t, HTTPOptions{})
	ts := httptest.NewServer(direct)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "real", Version: "1"}, opts)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	echo := func(s *mcp.ClientSession) {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "d_echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"text":"hi"`) {
			t.Fatalf("tools/call = %+v, %v", res, err)
		}
	}
	plain := connect(&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	for range 3 {
		echo(plain)
	}
	if n := p.answered.Load(); n != 3 {
		t.Errorf("the session path answered %d of the client's 3 calls", n)
	}
	var asked atomic.Int32
	asking := connect(&mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": "x"}}, nil
		},
	})
	echo(asking)
	if n := p.answered.Load(); n != 4 {
		t.Errorf("the session path answered %d of 1 call of a client that declared elicitation", n-3)
	}
	if res, err := asking.CallTool(ctx, &mcp.CallToolParams{Name: "d_ask", Arguments: map[string]any{}}); err != nil || res == nil {
		t.Fatalf("tools/call d_ask = %+v, %v", res, err)
	}
	if asked.Load() == 0 {
		t.Error("the client was asked no question")
	}
	if n := p.answered.Load(); n != 4 {
		t.Errorf("the session path answered a call whose handler asks the client (%d)", n-4)
	}
	// go-sdk's client as it comes declares roots: its plain calls are the
	// path's, its calls of an upstream tool are not.
	roots := connect(nil)
	echo(roots)
	if n := p.answered.Load(); n != 5 {
		t.Errorf("the session path answered %d of 1 call of a client that declared roots", n-4)
	}
	if _, err := roots.CallTool(ctx, &mcp.CallToolParams{Name: "u_mirror", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if n := p.answered.Load(); n != 5 {
		t.Error("the session path answered an upstream tool's call for a client that can be asked")
	}
}

// TestSessionPathListFollowsSwaps: the list the path keeps for sessions
// is go-sdk's list of the tools served now, after a reload as before.
func TestSessionPathListFollowsSwaps(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	srv := New(rt, Options{})
	e := newMCPEndpoint(rt, srv, HTTPOptions{})
	direct := rejectAmbiguous(newStreamGuard(e, HTTPOptions{}))
	sdk := NewHTTPHandler(rt, srv, HTTPOptions{noDirect: true})
	p := e.sessionCap.path
	list := sessionCase{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`}
	lists := func() (string, bool) {
		compareSession(t, direct, sdk, p, list) // go-sdk makes it, or it was kept
		answered := compareSession(t, direct, sdk, p, list)
		return list.run(t, direct).body, answered
	}
	before, first := lists()
	fewer := directCatalog()
	fewer.Services[0].Tools = fewer.Services[0].Tools[:2]
	fewer.Seal()
	if _, err := rt.Swap(fewer, map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	if compareSession(t, direct, sdk, p, list) {
		t.Error("the path answered tools/list with the list of the tools before the swap")
	}
	after, second := lists()
	if !first || !second || before == after || strings.Contains(after, "d_fail") {
		t.Errorf("the list did not follow the swap (path: %v, %v):\n%s\n%s", first, second, before, after)
	}
}

// TestSessionCloseEndsQuestions: a session whose call waits for an answer
// to a question that its client, gone, never sends is closed all the
// same, by the cap or by a DELETE, and the initialize of the session that
// made the cap close it does not wait for it. Before, go-sdk's close
// waited for the handler, and the handler for the answer, for ever.
func TestSessionCloseEndsQuestions(t *testing.T) {
	direct, _, _, _ := sessionPair(t, HTTPOptions{MaxSessions: 2})
	stuck := func() string {
		t.Helper()
		id := openSession(t, direct, "2025-11-25", `{"elicitation":{}}`, nil)
		leaveAsked(t, direct, id)
		return id
	}
	within := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still waiting after 20s", what)
		}
	}
	// The cap: a third session closes the first, whose call waits.
	stuck()
	openSession(t, direct, "2025-11-25", `{}`, nil)
	within("the initialize that closes a session whose call waits", func() {
		openSession(t, direct, "2025-11-25", `{}`, nil)
	})
	// A DELETE of a session whose call waits.
	id := stuck()
	within("the DELETE of a session whose call waits", func() {
		req := httptest.NewRequest("DELETE", "/mcp", nil)
		req.Header = legacyHeader(id)
		direct.ServeHTTP(httptest.NewRecorder(), req)
	})
}

// leaveAsked calls d_ask in session id, whose client leaves before it is
// asked: the handler's question waits in go-sdk for an answer that never
// comes.
func leaveAsked(t *testing.T, h http.Handler, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", "/mcp", strings.NewReader(legacyCall("1", "d_ask", `{}`)))
	req.Header = legacyHeader(id)
	h.ServeHTTP(httptest.NewRecorder(), req)
}

// TestSessionDeleteEndsQuestionsWithoutLimits is TestSessionCloseEndsQuestions's
// DELETE with the limits off and the session path off too (SSE polling),
// where nothing but the cap stood in front of go-sdk: the cap is there
// always now, and a client's DELETE of its own session whose call waits
// for an answer ends that wait.
func TestSessionDeleteEndsQuestionsWithoutLimits(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	h := NewHTTPHandler(rt, New(rt, Options{Name: "toolc", Version: "1.2.3"}),
		HTTPOptions{MaxSessions: -1, SessionIdleTimeout: -1, SSEPollAfter: time.Minute})
	id := openSession(t, h, "2025-11-25", `{"elicitation":{}}`, nil)
	leaveAsked(t, h, id)

	done := make(chan int)
	go func() {
		req := httptest.NewRequest("DELETE", "/mcp", nil)
		req.Header = legacyHeader(id)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		done <- w.Code
	}()
	select {
	case code := <-done:
		if code/100 != 2 {
			t.Errorf("DELETE: %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the DELETE of a session whose call waits: still waiting after 20s")
	}
}
