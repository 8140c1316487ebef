package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The direct path (direct.go) is held to go-sdk's answers: the same
// request, sent to an endpoint with the path and to one without it over
// the same server, must get the same status, headers and body.

// scripted is a dispatcher whose tools answer in every way a handler can:
// the catalog is directCatalog.
type scripted struct{}

func (scripted) Tools() []string {
	return []string{"echo", "rich", "fail", "empty", "ask", "missing", "hdr", "job", "caps"}
}

func (scripted) Call(ctx context.Context, tool, _ string, args json.RawMessage, _ func(runtime.Event)) (*runtime.Result, error) {
	switch tool {
	case "caps":
		// What the handler is told its client can be asked.
		in := plugins.InputOf(ctx)
		if in == nil {
			return plugins.Text("no input"), nil
		}
		return plugins.Text(fmt.Sprintf("elicitation %v, sampling %v, roots %v", in.Elicitation, in.Sampling, in.Roots)), nil
	case "rich":
		size := int64(42)
		return &plugins.Result{
			Content: []plugins.Content{
				{Type: "text", Text: "<b>&</b> \u2028 " + string(args)},
				{Type: "image", Data: []byte{1, 2, 3}, MIMEType: "image/png"},
				{Type: "resource_link", URI: "file:///x", Name: "x", Size: &size},
				{Type: "resource", Resource: &plugins.ResourceContents{URI: "file:///y", Text: "y<"}},
			},
			StructuredContent: map[string]any{"summary": "<&>"},
		}, nil
	case "fail":
		return nil, errors.New("the <disk> is full")
	case "empty":
		return &plugins.Result{}, nil
	case "ask":
		return &plugins.Result{InputRequests: []plugins.InputRequest{{ID: "q1", Method: plugins.MethodElicit,
			Params: json.RawMessage(`{"message":"Which?","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)}}}, nil
	case "missing":
		return &plugins.Result{MissingCapability: "elicitation", IsError: true, Content: []plugins.Content{plugins.TextContent("needs elicitation")}}, nil
	}
	return plugins.Text(string(args)), nil
}

// directCatalog is the catalog the comparison serves.
func directCatalog() *catalog.Catalog {
	text := func() catalog.Message {
		return catalog.Message{Fields: []*catalog.Field{
			{Name: "text", Type: catalog.String, Description: "Some text"},
			{Name: "n", Type: catalog.Integer, Description: "A number", Default: int64(3)},
		}}
	}
	tool := func(name string) *catalog.Tool {
		return &catalog.Tool{Name: name, Description: "The " + name + " tool <&>", Request: text()}
	}
	rich := tool("rich")
	rich.Response = &catalog.Message{Fields: []*catalog.Field{{Name: "summary", Type: catalog.String, Description: "A summary"}}}
	hdr := tool("hdr")
	hdr.Request.Fields[0].MCPHeader = "Text"
	job := tool("job")
	job.Task = catalog.TaskOptional
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "d", Version: "1.0.0", Description: "The direct path's comparison",
		Tools: []*catalog.Tool{tool("echo"), rich, tool("fail"), tool("empty"), tool("ask"), tool("missing"), hdr, job, tool("caps")},
	}}}
	cat.Seal()
	return cat
}

// directPair returns two handlers of one server: with the direct path, as
// NewHTTPHandler makes it, and without it; and the path, to count what it
// answered.
func directPair(t testing.TB) (direct, sdk http.Handler, d *directPath) {
	t.Helper()
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	e := newMCPEndpoint(rt, srv, HTTPOptions{})
	if e.direct == nil {
		t.Fatal("no direct path")
	}
	// NewHTTPHandler without OAuth.
	direct = rejectAmbiguous(newStreamGuard(e, HTTPOptions{}))
	sdk = NewHTTPHandler(rt, srv, HTTPOptions{noDirect: true})
	return direct, sdk, e.direct
}

// httpAnswer is one request and what a handler answered.
type httpAnswer struct {
	status int
	header http.Header
	body   string
	late   bool // cut short: its request's context ended first
}

func send(h http.Handler, header http.Header, body string) httpAnswer {
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	req.Header = header.Clone()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return httpAnswer{w.Code, w.Header(), w.Body.String(), false}
}

// random are the parts of an answer that differ from one answer to the
// next on either path: a sealed requestState (its nonce) and a session ID.
var random = regexp.MustCompile(`"requestState":"[^"]*"`)

func normal(x httpAnswer) httpAnswer {
	x.body = random.ReplaceAllString(x.body, `"requestState":"…"`)
	if x.header.Get("Mcp-Session-Id") != "" {
		x.header = x.header.Clone()
		x.header.Set("Mcp-Session-Id", "…")
	}
	return x
}

// compare sends one request to both handlers and fails unless the
// answers are the same; it reports whether the direct path answered.
func compare(t testing.TB, direct, sdk http.Handler, d *directPath, header http.Header, body string) bool {
	t.Helper()
	before := d.answered.Load()
	got := normal(send(direct, header, body))
	answered := d.answered.Load() != before
	want := normal(send(sdk, header, body))
	if got.status != want.status || fmt.Sprint(got.header) != fmt.Sprint(want.header) || got.body != want.body {
		t.Fatalf("%s %s\ndirect path (answered: %v): %d %v\n%q\ngo-sdk: %d %v\n%q", header, body, answered, got.status, got.header, got.body, want.status, want.header, want.body)
	}
	return answered
}

// modernHeader are the headers of a 2026-07-28 request.
func modernHeader(method, name string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

func callOf(id, name, args, meta string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,"_meta":` + meta + `}}`
}

// metaWithCapabilities is plainMeta2026 with the client capabilities caps.
func metaWithCapabilities(caps string) string {
	return strings.Replace(plainMeta2026, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":`+caps, 1)
}

const plainMeta2026 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// directCases are requests the comparison sends, and whether the direct
// path answers each (the rest are go-sdk's).
var directCases = []struct {
	name   string
	header http.Header
	body   string
	direct bool
}{
	{"call", modernHeader("tools/call", "d_echo"), callOf("7", "d_echo", `{"text":"hi"}`, plainMeta2026), true},
	{"call, string id", modernHeader("tools/call", "d_echo"), callOf(`"a-1"`, "d_echo", `{"text":"hi"}`, plainMeta2026), true},
	{"call, default applied", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, plainMeta2026), true},
	{"call, no arguments", modernHeader("tools/call", "d_echo"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"d_echo","_meta":` + plainMeta2026 + `}}`, true},
	{"call, string arguments", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `"{\"text\":\"x\"}"`, plainMeta2026), true},
	{"call, invalid arguments", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{"text":5}`, plainMeta2026), true},
	{"call, unknown argument", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{"txt":"a"}`, plainMeta2026), true},
	{"call, null arguments", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `null`, plainMeta2026), true},
	{"call, rich result", modernHeader("tools/call", "d_rich"), callOf("1", "d_rich", `{"text":"<x>"}`, plainMeta2026), true},
	{"call, handler fails", modernHeader("tools/call", "d_fail"), callOf("1", "d_fail", `{}`, plainMeta2026), true},
	{"call, empty result", modernHeader("tools/call", "d_empty"), callOf("1", "d_empty", `{}`, plainMeta2026), true},
	{"call, questions", modernHeader("tools/call", "d_ask"), callOf("1", "d_ask", `{}`, plainMeta2026), true},
	{"call, missing capability", modernHeader("tools/call", "d_missing"), callOf("1", "d_missing", `{}`, plainMeta2026), true},
	// What the client declared decides whether a question goes back to it.
	// What the client declared is what the handler is told it can be asked.
	{"call, capabilities: none", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, plainMeta2026), true},
	{"call, capabilities: elicitation", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{}}`, 1)), true},
	{"call, capabilities: sampling and roots", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"sampling":{},"roots":{"listChanged":true}}`, 1)), true},
	{"call, capabilities: all", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, strings.Replace(plainMeta2026, `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{"form":{}},"sampling":{"tools":{}},"roots":{},"experimental":{}}`, 1)), true},
	{"call, no clientInfo", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`), true},
	{"list", modernHeader("tools/list", ""), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":` + plainMeta2026 + `}}`, true},
	{"list again", modernHeader("tools/list", ""), `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":` + plainMeta2026 + `}}`, true},
	// go-sdk's.
	{"list, cursor", modernHeader("tools/list", ""), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x","_meta":` + plainMeta2026 + `}}`, false},
	{"call, unknown tool", modernHeader("tools/call", "nope"), callOf("1", "nope", `{}`, plainMeta2026), false},
	{"call, header tool", modernHeader("tools/call", "d_hdr"), callOf("1", "d_hdr", `{"text":"a"}`, plainMeta2026), false},
	{"call, task tool", modernHeader("tools/call", "d_job"), callOf("1", "d_job", `{}`, plainMeta2026), false},
	{"call, progress token", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, `{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`), false},
	{"call, log level", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, `{"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`), false},
	{"call, questions to a client that can answer", modernHeader("tools/call", "d_ask"), callOf("1", "d_ask", `{}`, metaWithCapabilities(`{"elicitation":{}}`)), true},
	{"call, go-sdk's client (roots)", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{"text":"a"}`, metaWithCapabilities(`{"roots":{"listChanged":true}}`)), true},
	{"call, every capability", modernHeader("tools/call", "d_ask"), callOf("1", "d_ask", `{}`, metaWithCapabilities(`{"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}},"extensions":{"io.x/y":{}},"experimental":{"z":{}}}`)), true},
	{"call, missing capability, with roots", modernHeader("tools/call", "d_missing"), callOf("1", "d_missing", `{}`, metaWithCapabilities(`{"roots":{}}`)), true},
	{"list, go-sdk's client (roots)", modernHeader("tools/list", ""), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":` + metaWithCapabilities(`{"roots":{"listChanged":true}}`) + `}}`, true},
	{"call, capability of the wrong type", modernHeader("tools/call", "d_ask"), callOf("1", "d_ask", `{}`, metaWithCapabilities(`{"elicitation":5}`)), false},
	{"call, capability member of the wrong type", modernHeader("tools/call", "d_ask"), callOf("1", "d_ask", `{}`, metaWithCapabilities(`{"elicitation":{"form":5}}`)), false},
	{"call, roots of the wrong type", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{"listChanged":"yes"}}`)), false},
	{"call, unknown capability", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"telepathy":{}}`)), false},
	{"call, capabilities not an object", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`[]`)), false},
	{"call, tasks extension, plain tool", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)), true},
	{"call, tasks extension, task tool", modernHeader("tools/call", "d_job"), callOf("1", "d_job", `{}`, metaWithCapabilities(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)), false},
	// The reading of params and _meta (plainParams, plainMeta): keys
	// exactly as go-sdk spells them, values where they are.
	{"call, params key in another case", modernHeader("tools/call", "d_echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"d_echo","arguments":{},"_meta":` + plainMeta2026 + `}}`, false},
	{"call, escaped params key", modernHeader("tools/call", "d_echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"d_echo","arguments":{"text":"e"},"_meta":` + plainMeta2026 + `}}`, true},
	{"call, name not a string", modernHeader("tools/call", "d_echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{},"_meta":` + plainMeta2026 + `}}`, false},
	{"call, capability in another case", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, metaWithCapabilities(`{"Roots":{}}`)), false},
	{"call, spaces in the capabilities", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, metaWithCapabilities(` { "roots" : { "listChanged" : true } , "sampling" : {} } `)), true},
	{"call, null capability", modernHeader("tools/call", "d_caps"), callOf("1", "d_caps", `{}`, metaWithCapabilities(`{"roots":null}`)), false},
	// Roots as plainRoots reads them without encoding/json, and the forms
	// it leaves to encoding/json.
	{"call, roots not listChanged", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{"listChanged":false}}`)), true},
	{"call, roots empty", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{}}`)), true},
	{"call, roots listChanged null", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{"listChanged":null}}`)), true},
	{"call, roots listChanged in another case", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{"ListChanged":true}}`)), true},
	{"call, roots with more", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{"listChanged":true,"more":[1]}}`)), true},
	{"call, roots listChanged a number", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":{"listChanged":1}}`)), false},
	{"call, roots an array", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, metaWithCapabilities(`{"roots":[]}`)), false},
	{"call, clientInfo null", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, `{"name":"c","version":"1"}`, `null`, 1)), false},
	{"call, clientInfo with a title", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, `{"name":"c","version":"1"}`, `{"name":"c","version":"1","title":"C"}`, 1)), true},
	{"call, clientInfo with more", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, `{"name":"c","version":"1"}`, `{"name":"c","version":"1","websiteUrl":"https://c"}`, 1)), false},
	{"call, clientInfo name escaped", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, `{"name":"c"`, `{"name":"\u0063"`, 1)), false},
	{"call, _meta key in another case", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/ClientInfo", 1)), false},
	{"list, arguments", modernHeader("tools/list", ""), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"arguments":{},"_meta":` + plainMeta2026 + `}}`, false},
	{"call, no capabilities", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), false},
	{"call, other revision in _meta", modernHeader("tools/call", "d_echo"), callOf("1", "d_echo", `{}`, strings.Replace(plainMeta2026, "2026-07-28", "2025-11-25", 1)), false},
	{"call, requestState", modernHeader("tools/call", "d_echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d_echo","requestState":"x","_meta":` + plainMeta2026 + `}}`, false},
	{"call, Mcp-Name differs", modernHeader("tools/call", "d_rich"), callOf("1", "d_echo", `{}`, plainMeta2026), false},
	{"call, no Mcp-Method", func() http.Header { h := modernHeader("tools/call", "d_echo"); h.Del("Mcp-Method"); return h }(), callOf("1", "d_echo", `{}`, plainMeta2026), false},
	{"call, Accept JSON only", func() http.Header {
		h := modernHeader("tools/call", "d_echo")
		h.Set("Accept", "application/json")
		return h
	}(), callOf("1", "d_echo", `{}`, plainMeta2026), false},
	{"call, text/plain", func() http.Header {
		h := modernHeader("tools/call", "d_echo")
		h.Set("Content-Type", "text/plain")
		return h
	}(), callOf("1", "d_echo", `{}`, plainMeta2026), false},
	{"call, Accept in parts", func() http.Header {
		h := modernHeader("tools/call", "d_echo")
		h.Set("Accept", "text/event-stream;q=0.5,, application/json")
		return h
	}(), callOf("1", "d_echo", `{}`, plainMeta2026), true},
	{"call, Content-Type with a charset", func() http.Header {
		h := modernHeader("tools/call", "d_echo")
		h.Set("Content-Type", "Application/JSON; charset=utf-8")
		return h
	}(), callOf("1", "d_echo", `{}`, plainMeta2026), true},
	{"call, Last-Event-ID", func() http.Header { h := modernHeader("tools/call", "d_echo"); h.Set("Last-Event-ID", "1"); return h }(), callOf("1", "d_echo", `{}`, plainMeta2026), false},
	{"call, float id", modernHeader("tools/call", "d_echo"), callOf("1.5", "d_echo", `{}`, plainMeta2026), true}, // go-sdk's ID, as it reads it
	{"call, null id", modernHeader("tools/call", "d_echo"), callOf("null", "d_echo", `{}`, plainMeta2026), false},
	{"notification", modernHeader("tools/call", "d_echo"), `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"d_echo","_meta":` + plainMeta2026 + `}}`, false},
	{"batch", modernHeader("tools/call", "d_echo"), `[` + callOf("1", "d_echo", `{}`, plainMeta2026) + `]`, false},
	{"not JSON", modernHeader("tools/call", "d_echo"), `{"jsonrpc":`, false},
	{"other method", modernHeader("prompts/list", ""), `{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"_meta":` + plainMeta2026 + `}}`, false},
	{"legacy, no session", func() http.Header {
		h := modernHeader("tools/call", "d_echo")
		h.Set("MCP-Protocol-Version", "2025-11-25")
		return h
	}(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d_echo","arguments":{}}}`, false},
}

// TestDirectPathIsGoSDK sends each of directCases to both handlers: the
// answers are the same bytes, and the direct path answers the cases it
// should and leaves the others to go-sdk.
func TestDirectPathIsGoSDK(t *testing.T) {
	direct, sdk, d := directPair(t)
	for _, tc := range directCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := compare(t, direct, sdk, d, tc.header, tc.body); got != tc.direct {
				t.Errorf("the direct path answered: %v, want %v", got, tc.direct)
			}
		})
	}
}

// TestDirectPathLegacySession: a 2025-11-25 session's tools/call and
// tools/list are go-sdk's, and their answers unchanged.
func TestDirectPathLegacySession(t *testing.T) {
	direct, sdk, d := directPair(t)
	handlers := []http.Handler{direct, sdk}
	var sessions [2]http.Header
	for i, h := range handlers {
		hd := http.Header{}
		hd.Set("Content-Type", "application/json")
		hd.Set("Accept", "application/json, text/event-stream")
		x := send(h, hd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		hd.Set("Mcp-Session-Id", x.header.Get("Mcp-Session-Id"))
		hd.Set("MCP-Protocol-Version", "2025-11-25")
		send(h, hd, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		sessions[i] = hd
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"d_echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`,
	} {
		got := normal(send(direct, sessions[0], body))
		want := normal(send(sdk, sessions[1], body))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\ndirect: %v\ngo-sdk: %v", body, got, want)
		}
		if !strings.Contains(got.body, `"result"`) {
			t.Errorf("%s: no result: %v", body, got)
		}
	}
	if n := d.answered.Load(); n != 0 {
		t.Errorf("the direct path answered %d requests of a session", n)
	}
}

// TestDirectPathFollowsSwaps: the list the path keeps is go-sdk's list of
// the tools served now, after a reload as before.
func TestDirectPathFollowsSwaps(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	cat := directCatalog()
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	srv := New(rt, Options{})
	e := newMCPEndpoint(rt, srv, HTTPOptions{})
	direct := rejectAmbiguous(newStreamGuard(e, HTTPOptions{}))
	sdk := NewHTTPHandler(rt, srv, HTTPOptions{noDirect: true})
	list := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":` + plainMeta2026 + `}}`
	first := compare(t, direct, sdk, e.direct, modernHeader("tools/list", ""), list)
	before := send(direct, modernHeader("tools/list", ""), list).body
	fewer := directCatalog()
	fewer.Services[0].Tools = fewer.Services[0].Tools[:2]
	fewer.Seal()
	if _, err := rt.Swap(fewer, map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	second := compare(t, direct, sdk, e.direct, modernHeader("tools/list", ""), list)
	after := send(direct, modernHeader("tools/list", ""), list).body
	if !first || !second || before == after || strings.Contains(after, "d_fail") {
		t.Errorf("the list did not follow the swap (direct: %v, %v):\n%s\n%s", first, second, before, after)
	}
	// A tool gone is go-sdk's to answer.
	if compare(t, direct, sdk, e.direct, modernHeader("tools/call", "d_fail"), callOf("1", "d_fail", `{}`, plainMeta2026)) {
		t.Error("the direct path answered a call of a tool the swap removed")
	}
}

// TestDirectPathStandsAside: a server with middleware added after New,
// a closed gate, or OAuth is served by go-sdk alone.
func TestDirectPathStandsAside(t *testing.T) {
	call := callOf("1", "d_echo", `{}`, plainMeta2026)
	for _, tc := range []struct {
		name  string
		setup func(*Server, *HTTPOptions)
	}{
		{"middleware", func(s *Server, _ *HTTPOptions) {
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler { return next })
		}},
		{"closed gate", func(s *Server, _ *HTTPOptions) { s.Hold(NewGate()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New(runtime.Options{})
			if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
				t.Fatal(err)
			}
			srv := New(rt, Options{})
			var opts HTTPOptions
			tc.setup(srv, &opts)
			e := newMCPEndpoint(rt, srv, opts)
			h := rejectAmbiguous(newStreamGuard(e, opts))
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(call))
			req.Header = modernHeader("tools/call", "d_echo")
			ctx, cancel := context.WithCancel(req.Context())
			cancel() // a held call ends with its request
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
			if n := e.direct.answered.Load(); n != 0 {
				t.Errorf("the direct path answered %d", n)
			}
		})
	}
	t.Run("open gate", func(t *testing.T) {
		rt := runtime.New(runtime.Options{})
		if _, err := rt.Swap(directCatalog(), map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
			t.Fatal(err)
		}
		srv := New(rt, Options{})
		g := NewGate()
		srv.Hold(g)
		g.Open(nil)
		e := newMCPEndpoint(rt, srv, HTTPOptions{})
		x := send(rejectAmbiguous(newStreamGuard(e, HTTPOptions{})), modernHeader("tools/call", "d_echo"), call)
		if e.direct.answered.Load() != 1 || !strings.Contains(x.body, `"result"`) {
			t.Errorf("an open gate: the direct path did not answer: %v", x)
		}
	})
}

// FuzzDirectPath sends the same request to both handlers: the answers are
// the same bytes, whichever path answered. The seeds are directCases; the
// fuzzer varies the body and the headers that decide the path.
func FuzzDirectPath(f *testing.F) {
	for _, tc := range directCases {
		f.Add(tc.body, tc.header.Get("MCP-Protocol-Version"), tc.header.Get("Mcp-Method"), tc.header.Get("Mcp-Name"), tc.header.Get("Accept"), tc.header.Get("Content-Type"))
	}
	direct, sdk, d := directPair(f)
	f.Fuzz(func(t *testing.T, body, version, method, name, accept, contentType string) {
		h := http.Header{}
		for k, v := range map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name, "Accept": accept, "Content-Type": contentType} {
			if v != "" && !bytes.ContainsAny([]byte(v), "\r\n\x00") {
				h.Set(k, v)
			}
		}
		compare(t, direct, sdk, d, h, body)
	})
}

// TestDirectPathServesRealClients: go-sdk's client, with its default
// options (it declares roots), gets its 2026-07-28 tools/call and
// tools/list answered on the direct path, over a loopback listener.
func TestDirectPathServesRealClients(t *testing.T) {
	direct, _, d := directPair(t)
	// A loopback listener, where go-sdk guards against DNS rebinding.
	ts := httptest.NewServer(direct)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "real", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := d.answered.Load()
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "d_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"text":"hi"`) {
		t.Fatalf("tools/call = %+v, %v", res, err)
	}
	if n := d.answered.Load() - before; n != 2 {
		t.Errorf("the direct path answered %d of the client's 2 requests", n)
	}
}

// TestLocalLoopback: localLoopback reads a TCP address as isLoopback
// reads its string, which is what go-sdk reads.
func TestLocalLoopback(t *testing.T) {
	for _, a := range []*net.TCPAddr{
		{IP: net.IPv4(127, 0, 0, 1), Port: 80},
		{IP: net.IPv4(127, 3, 2, 1), Port: 80},
		{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 80},
		{IP: net.IPv6loopback, Port: 80},
		{IP: net.IPv6loopback, Port: 80, Zone: "lo"},
		{IP: net.IPv4(10, 0, 0, 1), Port: 80},
		{IP: net.ParseIP("fe80::1"), Port: 80, Zone: "eth0"},
		{IP: net.IPv4zero, Port: 80},
		{Port: 80},
	} {
		if got, want := localLoopback(a), isLoopback(a.String()); got != want {
			t.Errorf("%v: localLoopback %v, isLoopback of its string %v", a, got, want)
		}
	}
}
