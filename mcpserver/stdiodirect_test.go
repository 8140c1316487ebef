package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The direct path over stdio (stdiodirect.go) is held to go-sdk's lines:
// the same lines, sent to a session with the path and to one without it
// over the same server, must get the same lines back, in the same order.

// stdioScripted answers as scripted does, and adds three tools: block,
// which waits for its call to be cancelled and then for release; talk,
// which reports progress and a log line before it answers; and confirm,
// which asks its client one question (roots/list for the text "roots",
// sampling/createMessage for "sample", a form otherwise) and answers
// with the client's answer.
type stdioScripted struct {
	scripted
	release chan struct{}
	started chan struct{} // a block call is running
}

func (s stdioScripted) Tools() []string {
	return append(s.scripted.Tools(), "block", "talk", "confirm")
}

func (s stdioScripted) Call(ctx context.Context, tool, id string, args json.RawMessage, onEvent func(runtime.Event)) (*runtime.Result, error) {
	switch tool {
	case "block":
		s.started <- struct{}{}
		<-ctx.Done()
		<-s.release
		return nil, ctx.Err()
	case "talk":
		onEvent(runtime.Event{Progress: &plugins.ProgressEvent{Progress: 1, Total: 2, Message: "half"}})
		onEvent(runtime.Event{Log: &plugins.LogEvent{Level: "info", Logger: "talk", Message: "said"}})
		return plugins.Text("done"), nil
	case "confirm":
		var in struct{ Text string }
		_ = json.Unmarshal(args, &in)
		var (
			answer any
			err    error
		)
		switch in.Text {
		case "roots":
			answer, err = plugins.Roots(ctx, "r1")
		case "sample":
			var res *plugins.SampleResult
			if res, err = plugins.Sample(ctx, "s1", plugins.SampleRequest{Messages: []plugins.SamplingMessage{plugins.UserText("Which?")}, MaxTokens: 10}); err == nil {
				answer = res.Text()
			}
		default:
			answer, err = plugins.Elicit(ctx, "q1", plugins.Form{Message: "Which?", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)})
		}
		if err != nil {
			return plugins.Finish(ctx, nil, err), nil
		}
		b, _ := json.Marshal(answer)
		return plugins.Text(string(b)), nil
	}
	return s.scripted.Call(ctx, tool, id, args, onEvent)
}

func stdioCatalog() *catalog.Catalog {
	cat := directCatalog()
	for _, name := range []string{"block", "talk", "confirm"} {
		cat.Services[0].Tools = append(cat.Services[0].Tools, &catalog.Tool{Name: name, Description: "The " + name + " tool",
			Request: catalog.Message{Fields: []*catalog.Field{{Name: "text", Type: catalog.String, Description: "Some text"}}}})
	}
	// u_mirror is an upstream server's tool (the bridge keeps its call
	// open between rounds), served here by the script (sessdirect_test.go).
	cat.Services = append(cat.Services, &catalog.Service{Name: "u", Version: "1.0.0", Description: "An upstream server's tools",
		Upstream: &catalog.Upstream{Command: []string{"upstream"}},
		Tools:    []*catalog.Tool{{Name: "mirror", Description: "Mirror", Request: catalog.Message{}}}})
	cat.Seal()
	return cat
}

// stdioStep is a line to send, and the ids (JSON) whose answers to wait
// for before the next: a line is sent when what it follows is answered,
// so that the order of the answers is the server's alone. A line
// "answer METHOD MEMBER" sends no line of its own: it waits for the
// server's first request of the method that has no answer, and answers
// it with the member ("result":... or "error":...); "asked METHOD" only
// waits for such a request.
type stdioStep struct {
	line string
	wait []string
}

// reply is a step that answers the server's request of method with
// member, and then waits for the answers to ids.
func reply(method, member string, ids ...string) stdioStep {
	return stdioStep{"answer " + method + " " + member, ids}
}

// stdioRun sends steps to a session of srv over ServeStdio, with the
// direct path or without, then ends the input, and returns every line the
// server wrote and how many calls the path answered.
func stdioRun(t testing.TB, rt *runtime.Runtime, srv *Server, d *stdioScripted, steps []stdioStep, direct bool, eofWait time.Duration) ([]string, uint64) {
	t.Helper()
	d.release, d.started = make(chan struct{}), make(chan struct{}, 8)
	released := false
	release := func() {
		if !released {
			close(d.release)
			released = true
		}
	}
	defer release()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var filter *stdioFilter
	var live atomic.Pointer[stdioFilter] // filter, for a read while the session runs
	opts := StdioOptions{noDirect: !direct, filtered: func(f *stdioFilter) {
		filter, f.eofWait = f, eofWait
		live.Store(f)
	}}
	served := make(chan struct{})
	go func() {
		ServeStdio(context.Background(), rt, srv, inR, outW, opts)
		outW.Close()
		close(served)
	}()
	var (
		mu    sync.Mutex
		lines []string
		more  = make(chan struct{}, 1)
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, normalLine(sc.Text()))
			mu.Unlock()
			select {
			case more <- struct{}{}:
			default:
			}
		}
	}()
	// replied are the ids (JSON) of the server's requests answered.
	replied := map[string]bool{}
	asked := func(method string, take bool) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Method == method && len(m.ID) > 0 && !replied[string(m.ID)] {
				replied[string(m.ID)] = take
				return string(m.ID), true
			}
		}
		return "", false
	}
	answeredID := func(id string, from int) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines[from:] {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && string(m.ID) == id {
				return true
			}
		}
		return false
	}
	for _, s := range steps {
		mu.Lock()
		from := len(lines)
		mu.Unlock()
		method, take := strings.CutPrefix(s.line, "answer ")
		method, wait := strings.CutPrefix(method, "asked ")
		var member string
		if take {
			method, member, _ = strings.Cut(method, " ")
		}
		if take || wait {
			deadline := time.After(20 * time.Second)
			id, ok := asked(method, take)
			for !ok {
				select {
				case <-more:
				case <-deadline:
					mu.Lock()
					defer mu.Unlock()
					t.Fatalf("no %s from the server; it wrote:\n%s", method, strings.Join(lines, "\n"))
				}
				id, ok = asked(method, take)
			}
			if take {
				if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":`+id+`,`+member+"}\n"); err != nil {
					t.Fatalf("answering %s: %v", method, err)
				}
			}
		} else if s.line == "release" {
			release()
		} else if s.line == "started" {
			// A cancellation that comes before the handler starts is
			// seen before it runs, or not, as the runtime's select picks.
			select {
			case <-d.started:
			case <-time.After(20 * time.Second):
				t.Fatal("the block call did not start")
			}
		} else if _, err := io.WriteString(inW, s.line+"\n"); err != nil {
			t.Fatalf("writing %s: %v", s.line, err)
		}
		for _, id := range s.wait {
			deadline := time.After(20 * time.Second)
			for !answeredID(id, from) {
				select {
				case <-more:
				case <-deadline:
					mu.Lock()
					defer mu.Unlock()
					t.Fatalf("no answer to %s after %s; the server wrote:\n%s", id, s.line, strings.Join(lines, "\n"))
				}
			}
		}
		// The path takes calls once ServeStdio has stored go-sdk's
		// session, right after Connect returns, which may come after
		// go-sdk has answered a line on a loaded machine: until then,
		// go-sdk answers the calls (the same lines), and the count of
		// the path's would be short (CI, 2026-12-02).
		if f := live.Load(); len(s.wait) > 0 && f != nil && f.direct != nil {
			deadline := time.Now().Add(20 * time.Second)
			for f.direct.session.Load() == nil {
				if time.Now().After(deadline) {
					t.Fatal("the stdio path never got go-sdk's session")
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	inW.Close()
	release()
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end at the end of its input")
	}
	<-read
	var answered uint64
	if filter != nil && filter.direct != nil {
		answered = filter.direct.answered.Load()
	}
	return lines, answered
}

// normalLine is a line without what differs from one answer to the next
// on either path: a sealed requestState's nonce.
func normalLine(l string) string {
	return random.ReplaceAllString(l, `"requestState":"…"`)
}

const (
	legacyInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initedNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// initWith is legacyInit from a client that declares caps.
func initWith(caps string) string {
	return strings.Replace(legacyInit, `"capabilities":{}`, `"capabilities":`+caps, 1)
}

func modernCall(id, name, args string) string {
	return callOf(id, name, args, plainMeta2026)
}

// call is a step that sends a line and waits for the answer to id.
func call(id, line string) stdioStep { return stdioStep{line, []string{id}} }

// plainLegacyCalls are calls of a 2025-11-25 session, each answered
// before the next.
var plainLegacyCalls = []stdioStep{
	call("1", legacyCall("1", "d_echo", `{"text":"hi"}`)),
	call(`"s-1"`, legacyCall(`"s-1"`, "d_echo", `{"text":"hi"}`)),
	call("2", legacyCall("2", "d_echo", `{}`)),
	call("3", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"d_echo"}}`),
	call("4", legacyCall("4", "d_echo", `"{\"text\":\"x\"}"`)),
	call("5", legacyCall("5", "d_echo", `{"text":5}`)),
	call("6", legacyCall("6", "d_echo", `{"txt":"a"}`)),
	call("7", legacyCall("7", "d_echo", `null`)),
	call("8", legacyCall("8", "d_rich", `{"text":"<x>"}`)),
	call("9", legacyCall("9", "d_fail", `{}`)),
	call("10", legacyCall("10", "d_empty", `{}`)),
	call("11", legacyCall("11", "d_ask", `{}`)),
	call("12", legacyCall("12", "d_missing", `{}`)),
	call("13", legacyCall("13", "d_talk", `{}`)),
	call("14", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"d_echo","arguments":{"text":"  spaced  "}}}`),
	call("15", legacyCall("15.5", "d_echo", `{}`)), // the id as go-sdk reads it
}

// goSDKLegacyCalls are calls of a 2025-11-25 session that go-sdk answers.
var goSDKLegacyCalls = []stdioStep{
	call("20", legacyCall("20", "nope", `{}`)),
	call("21", legacyCall("21", "d_hdr", `{"text":"a"}`)),
	call("22", legacyCall("22", "d_job", `{}`)),
	call("23", `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"d_talk","arguments":{},"_meta":{"progressToken":"p"}}}`),
	call("24", `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"d_echo","arguments":{},"_meta":{}}}`),
	call("25", `{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"d_echo","arguments":{},"task":{}}}`),
	call("26", `{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"d_`+strings.Repeat("x", 300)+`"}}`),
	call("27", `{"jsonrpc":"2.0","id":27,"method":"tools/call"}`),
	call("28", `{"jsonrpc":"2.0","id":28,"method":"tools/list"}`),
	call("29", `{"jsonrpc":"2.0","id":29,"method":"ping"}`),
	call("30", modernCall("30", "d_echo", `{}`)), // a 2026-07-28 request in a 2025-11-25 session
}

// cancelSteps cancel calls while they run: the cancellation reaches the
// handler, whose answer comes when it returns, on either path; a request
// that reuses the id of a cancelled call before that is dropped.
var cancelSteps = []stdioStep{
	{legacyCall("40", "d_block", `{}`), nil},
	{"started", nil},
	{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":40,"reason":"enough"}}`, nil},
	// Its id, while it runs cancelled: go-sdk drops the request.
	{legacyCall("40", "d_echo", `{"text":"again"}`), nil},
	call("41", `{"jsonrpc":"2.0","id":41,"method":"ping"}`),
	{"release", []string{"40"}},
	call("42", legacyCall("42", "d_echo", `{"text":"after"}`)),
	// A call in flight is in use: the filter refuses its id.
	{legacyCall("43", "d_block", `{}`), nil},
	{"started", nil},
	call("null", legacyCall("43", "d_echo", `{}`)),
	{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"43"}}`, nil}, // not 43
	call("44", legacyCall("44", "d_echo", `{}`)),
	{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":43.0}}`, []string{"43"}},
}

func seq(parts ...[]stdioStep) []stdioStep { return slices.Concat(parts...) }

var stdioCases = []struct {
	name   string
	steps  []stdioStep
	direct int // the calls the path answers; -1: as it happens
}{
	{"2025-11-25", seq([]stdioStep{call("0", legacyInit), {initedNote, nil}}, plainLegacyCalls, goSDKLegacyCalls), len(plainLegacyCalls)},
	{"2025-11-25, no initialized", seq([]stdioStep{call("0", legacyInit)}, plainLegacyCalls[:3]), 3},
	{"2025-11-25, cancelled", seq([]stdioStep{call("0", legacyInit), {initedNote, nil}}, cancelSteps), 4},
	{"2025-06-18", seq([]stdioStep{call("0", strings.Replace(legacyInit, "2025-11-25", "2025-06-18", 1))}, plainLegacyCalls[:3]), 3},
	{"2025-11-25, piped", []stdioStep{{legacyInit, nil}, {initedNote, nil}, call("1", legacyCall("1", "d_echo", `{}`))}, -1},
	{"before initialize", []stdioStep{call("1", legacyCall("1", "d_echo", `{}`)), call("0", legacyInit), call("2", legacyCall("2", "d_echo", `{}`))}, 1},
	// A client that can be asked: a handler's questions go to it over
	// the session while the call waits, on either path.
	{"elicitation", seq([]stdioStep{call("0", initWith(`{"elicitation":{}}`))}, plainLegacyCalls[:3]), 3},
	{"roots", seq([]stdioStep{call("0", initWith(`{"roots":{}}`))}, plainLegacyCalls[:3]), 3},
	{"sampling", seq([]stdioStep{call("0", initWith(`{"sampling":{}}`))}, plainLegacyCalls[:3]), 3},
	{"elicitation, answered", []stdioStep{call("0", initWith(`{"elicitation":{}}`)), {initedNote, nil},
		{legacyCall("1", "d_confirm", `{}`), nil},
		reply("elicitation/create", `"result":{"action":"accept","content":{"a":"x"}}`, "1"),
		{legacyCall("2", "d_confirm", `{}`), nil},
		reply("elicitation/create", `"result":{"action":"decline"}`, "2"),
		// Answers that are none: an error, and values the form does
		// not take (go-sdk checks them).
		{legacyCall("3", "d_confirm", `{}`), nil},
		reply("elicitation/create", `"error":{"code":-32000,"message":"the user went away"}`, "3"),
		{legacyCall(`"s-4"`, "d_confirm", `{}`), nil},
		reply("elicitation/create", `"result":{"action":"accept","content":{"a":5}}`, `"s-4"`),
		// A question of a capability not declared, and a call that asks
		// nothing, between.
		call("5", legacyCall("5", "d_confirm", `{"text":"roots"}`)),
		call("6", legacyCall("6", "d_echo", `{}`)),
		// A call waiting for its answer holds up no other call.
		{legacyCall("7", "d_confirm", `{}`), nil},
		{"asked elicitation/create", nil},
		call("8", legacyCall("8", "d_echo", `{"text":"meanwhile"}`)),
		call("9", `{"jsonrpc":"2.0","id":9,"method":"ping"}`),
		reply("elicitation/create", `"result":{"action":"accept","content":{"a":"seven"}}`, "7"),
	}, 8},
	{"roots and sampling, answered", []stdioStep{call("0", initWith(`{"roots":{"listChanged":true},"sampling":{}}`)), {initedNote, nil},
		{legacyCall("1", "d_confirm", `{"text":"roots"}`), nil},
		reply("roots/list", `"result":{"roots":[{"uri":"file:///work","name":"work"}]}`, "1"),
		{legacyCall("2", "d_confirm", `{"text":"sample"}`), nil},
		reply("sampling/createMessage", `"result":{"role":"assistant","model":"m","content":{"type":"text","text":"that one"}}`, "2"),
		call("3", legacyCall("3", "d_confirm", `{}`)), // elicitation: not declared
	}, 3},
	// An upstream tool's handler is the bridge, which keeps the upstream
	// server's call open between rounds: go-sdk's for a client that can
	// be asked, the path's for one that cannot.
	{"upstream tool", seq([]stdioStep{call("0", legacyInit), call("100", legacyCall("100", "u_mirror", `{}`))}, plainLegacyCalls[:1]), 2},
	{"upstream tool, roots", seq([]stdioStep{call("0", initWith(`{"roots":{"listChanged":true}}`)), call("100", legacyCall("100", "u_mirror", `{}`))}, plainLegacyCalls[:1]), 1},
	{"upstream tool, elicitation", seq([]stdioStep{call("0", initWith(`{"elicitation":{}}`)), call("100", legacyCall("100", "u_mirror", `{}`))}, plainLegacyCalls[:1]), 1},
	{"log level", seq([]stdioStep{call("0", legacyInit), call("1", legacyCall("1", "d_talk", `{}`)),
		call("50", `{"jsonrpc":"2.0","id":50,"method":"logging/setLevel","params":{"level":"debug"}}`)}, plainLegacyCalls[13:14]), 1},
	{"2025-03-26", seq([]stdioStep{call("0", strings.Replace(legacyInit, "2025-11-25", "2025-03-26", 1))}, plainLegacyCalls[:3]), 0},
	{"2026-07-28", []stdioStep{
		call("1", modernCall("1", "d_echo", `{"text":"first"}`)), // initializes go-sdk's session
		call("2", modernCall("2", "d_echo", `{"text":"hi"}`)),
		call(`"s"`, modernCall(`"s"`, "d_echo", `{}`)),
		call("3", modernCall("3", "d_rich", `{"text":"<x>"}`)),
		call("4", modernCall("4", "d_fail", `{}`)),
		call("5", modernCall("5", "d_empty", `{}`)),
		call("6", modernCall("6", "d_ask", `{}`)),
		call("7", modernCall("7", "d_missing", `{}`)),
		call("8", modernCall("8", "d_talk", `{}`)),
		call("9", modernCall("9", "d_echo", `{"text":5}`)),
		call("10", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"d_echo","_meta":`+plainMeta2026+`}}`),
		// go-sdk's.
		call("20", legacyCall("20", "d_echo", `{}`)),
		call("21", modernCall("21", "nope", `{}`)),
		call("22", callOf("22", "d_echo", `{}`, `{"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`)),
		call("24", `{"jsonrpc":"2.0","id":24,"method":"tools/list","params":{"_meta":`+plainMeta2026+`}}`),
		call("25", callOf("25", "d_echo", `{}`, strings.Replace(plainMeta2026, "2026-07-28", "2099-01-01", 1))),
		call("26", `{"jsonrpc":"2.0","id":26,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
		call("27", modernCall("27", "d_echo", `{}`)),
	}, 11},
	{"2026-07-28, capabilities", []stdioStep{
		call("1", callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"roots":{}}`, 1))),
		call("2", callOf("2", "d_ask", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{}}`, 1))),
		call("3", callOf("3", "d_missing", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{},"sampling":{}}`, 1))),
		call("4", modernCall("4", "d_missing", `{}`)),
		call("5", modernCall("5", "d_ask", `{}`)),
		call("6", callOf("6", "d_ask", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"elicitation":"yes"}`, 1))),
	}, 4},
	{"end of input", []stdioStep{call("0", legacyInit), call("1", legacyCall("1", "d_echo", `{}`)), {legacyCall("2", "d_rich", `{}`), nil}}, 2},
}

// TestStdioDirectIsGoSDK sends each case's lines to a session with the
// direct path and to one without it: the server writes the same lines,
// and the path answers the calls it should.
func TestStdioDirectIsGoSDK(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	d := &stdioScripted{}
	if _, err := rt.Swap(stdioCatalog(), map[string]runtime.Dispatcher{"d": d, "u": mirror{}}); err != nil {
		t.Fatal(err)
	}
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	for _, tc := range stdioCases {
		t.Run(tc.name, func(t *testing.T) {
			got, answered := stdioRun(t, rt, srv, d, tc.steps, true, StdioEOFWait)
			want, _ := stdioRun(t, rt, srv, d, tc.steps, false, StdioEOFWait)
			if !slices.Equal(got, want) {
				t.Errorf("the direct path wrote:\n%s\ngo-sdk wrote:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if tc.direct >= 0 && answered != uint64(tc.direct) {
				t.Errorf("the direct path answered %d calls, want %d; go-sdk wrote:\n%s", answered, tc.direct, strings.Join(want, "\n"))
			}
		})
	}
}

// FuzzStdioDirect sends a line, after an initialize (2025-11-25) or a
// first call (2026-07-28), to a session with the direct path and to one
// without it: the server writes the same lines. The initialize's client
// declares roots, as go-sdk's does, for a line of odd length, and nothing
// otherwise (it is sent no answer to a question, so declares no more). The line's answer may come
// at any moment before the end of the input, on either path, so the lines
// are compared as a set; TestStdioDirectIsGoSDK holds their order. The
// seeds are the lines of stdioCases.
func FuzzStdioDirect(f *testing.F) {
	for _, tc := range stdioCases {
		for _, s := range tc.steps {
			if s.line != "release" && s.line != "started" && !strings.HasPrefix(s.line, "answer ") && !strings.HasPrefix(s.line, "asked ") && !strings.Contains(s.line, "d_block") {
				f.Add(s.line, strings.Contains(s.line, "2026-07-28"))
			}
		}
	}
	rt := runtime.New(runtime.Options{})
	d := &stdioScripted{}
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": d}); err != nil {
		f.Fatal(err)
	}
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	f.Fuzz(func(t *testing.T, line string, modern bool) {
		if strings.ContainsAny(line, "\r\n") || namesSetup(line) {
			// One line, whose ids are not the setup's: reusing the id of
			// a request just answered is a race between the answer's
			// write and the filter's bookkeeping, on either path.
			return
		}
		init := legacyInit
		if len(line)%2 == 1 {
			init = initWith(`{"roots":{"listChanged":true}}`)
		}
		first := call(`"fuzz-setup"`, strings.Replace(init, `"id":0`, `"id":"fuzz-setup"`, 1))
		if modern {
			first = call(`"fuzz-setup"`, modernCall(`"fuzz-setup"`, "d_echo", `{}`))
		}
		steps := []stdioStep{first, {line, nil}, call(`"fuzz-last"`, `{"jsonrpc":"2.0","id":"fuzz-last","method":"ping"}`)}
		// A request that go-sdk never answers (one of a batch that reuses
		// an id, say) holds the end of the input for a while, on either
		// path; the calls here answer at once, well within it even
		// under the race detector on a loaded machine.
		got, _ := stdioRun(t, rt, srv, d, steps, true, 5*time.Second)
		want, _ := stdioRun(t, rt, srv, d, steps, false, 5*time.Second)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s\nthe direct path wrote:\n%s\ngo-sdk wrote:\n%s", line, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// namesSetup reports whether a line holds, anywhere, a string that is the
// id of one of FuzzStdioDirect's own requests.
func namesSetup(line string) bool {
	var v any
	if json.Unmarshal([]byte(line), &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return x == "fuzz-setup" || x == "fuzz-last"
		case []any:
			return slices.ContainsFunc(x, walk)
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
