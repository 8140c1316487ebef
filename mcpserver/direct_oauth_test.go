package mcpserver

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/runtime"
)

// auditLines returns a writer for the audit lines, and a function that
// returns those written since it last did.
func auditLines() (io.Writer, func() string) {
	var b testsync.Buffer
	seen := 0
	return &b, func() string {
		all := b.String()
		out := all[seen:]
		seen = len(all)
		return out
	}
}

// oauthPair returns two handlers of one server with OAuth, as
// NewHTTPHandler makes them, with the direct path and without it; the
// first one's endpoint; and the tokens' issuer. The server's tools need
// the scope tools, and rich admin as well; the audit lines go to audit.
func oauthPair(t testing.TB, audit io.Writer) (direct, sdk http.Handler, e *mcpEndpoint, iss *testIssuer) {
	t.Helper()
	cat := directCatalog()
	cat.Services[0].Scopes = []string{"tools"}
	for _, tl := range cat.Services[0].Tools {
		tl.Scopes = []string{"tools"}
		if tl.Name == "rich" {
			tl.Scopes = []string{"tools", "admin"}
		}
	}
	cat.Seal()
	log := slog.New(slog.NewTextHandler(audit, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration_ms" {
			return slog.Attr{}
		}
		return a
	}}))
	rt := runtime.New(runtime.Options{Audit: log, AuditArguments: true})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"d": scripted{}}); err != nil {
		t.Fatal(err)
	}
	iss = newTestIssuer(t)
	v := iss.verifier(t)
	srv := New(rt, Options{Name: "toolc", Version: "1.2.3"})
	direct, e = newHTTPHandler(rt, srv, HTTPOptions{OAuth: v})
	if e.direct == nil || !e.direct.oauth {
		t.Fatal("no direct path for OAuth callers")
	}
	sdk = NewHTTPHandler(rt, srv, HTTPOptions{OAuth: v, noDirect: true})
	return direct, sdk, e, iss
}

// TestDirectPathWithOAuth holds the direct path to go-sdk's answers for
// OAuth callers: the same bytes, the same audit lines, and a
// requestState bound to the caller it asked, which go-sdk opens for that
// caller alone. The path takes a call of a tool the token holds every
// scope of, and leaves the rest to go-sdk: lists, which are each caller's
// own, and calls that scopeFilter refuses.
func TestDirectPathWithOAuth(t *testing.T) {
	audit, take := auditLines()
	direct, sdk, e, iss := oauthPair(t, audit)
	alice := "Bearer " + iss.token(t, "alice", "tools")
	admin := "Bearer " + iss.token(t, "alice", "tools admin")
	bob := "Bearer " + iss.token(t, "bob", "tools")
	outsider := "Bearer " + iss.token(t, "mallory", "other")
	with := func(h http.Header, auth string) http.Header {
		h.Set("Authorization", auth)
		return h
	}
	// compareAudited sends body to both, and wants the same answer and the
	// same audit lines from each; it returns the direct path's answer.
	compareAudited := func(t *testing.T, header http.Header, body string) (bool, httpAnswer) {
		t.Helper()
		take()
		before := e.direct.answered.Load()
		raw := send(direct, header, body)
		got := normal(raw)
		answered := e.direct.answered.Load() != before
		gotAudit := take()
		want := normal(send(sdk, header, body))
		wantAudit := take()
		if got.status != want.status || fmt.Sprint(got.header) != fmt.Sprint(want.header) || got.body != want.body {
			t.Fatalf("%s\ndirect path (answered: %v): %d %v\n%q\ngo-sdk: %d %v\n%q", body, answered, got.status, got.header, got.body, want.status, want.header, want.body)
		}
		if gotAudit != wantAudit {
			t.Fatalf("%s: audit lines\ndirect path: %q\ngo-sdk:      %q", body, gotAudit, wantAudit)
		}
		return answered, raw
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		direct bool
	}{
		{"call", with(modernHeader("tools/call", "d_echo"), alice), callOf("1", "d_echo", `{"text":"<a>"}`, plainMeta2026), true},
		{"call, a string ID", with(modernHeader("tools/call", "d_echo"), alice), callOf(`"x<"`, "d_echo", `{"text":"a"}`, plainMeta2026), true},
		{"call, the handler's error", with(modernHeader("tools/call", "d_fail"), alice), callOf("2", "d_fail", `{}`, plainMeta2026), true},
		{"call, invalid arguments", with(modernHeader("tools/call", "d_echo"), alice), callOf("3", "d_echo", `{"n":"x"}`, plainMeta2026), true},
		{"call, questions", with(modernHeader("tools/call", "d_ask"), alice), callOf("4", "d_ask", `{}`, metaWithCapabilities(`{"elicitation":{}}`)), true},
		{"call, a step-up scope", with(modernHeader("tools/call", "d_rich"), alice), callOf("5", "d_rich", `{}`, plainMeta2026), false},
		{"call, the step-up scope held", with(modernHeader("tools/call", "d_rich"), admin), callOf("6", "d_rich", `{}`, plainMeta2026), true},
		{"call, a hidden tool", with(modernHeader("tools/call", "d_echo"), outsider), callOf("7", "d_echo", `{}`, plainMeta2026), false},
		{"list", with(modernHeader("tools/list", ""), alice), `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":` + plainMeta2026 + `}}`, false},
		{"list, the step-up scope held", with(modernHeader("tools/list", ""), admin), `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":` + plainMeta2026 + `}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := compareAudited(t, tc.header, tc.body); got != tc.direct {
				t.Errorf("the direct path answered: %v, want %v", got, tc.direct)
			}
		})
	}
	if lines := take(); lines != "" {
		t.Errorf("audit lines after the comparison: %q", lines)
	}

	// A question's requestState, sealed on the direct path for alice: the
	// next round (go-sdk's, as every request with a state is) opens it for
	// alice and for no one else.
	ask := with(modernHeader("tools/call", "d_ask"), alice)
	answered, first := compareAudited(t, ask, callOf("10", "d_ask", `{}`, metaWithCapabilities(`{"elicitation":{}}`)))
	if !answered {
		t.Fatal("the direct path did not answer the first round")
	}
	state := requestStateOf(t, first.body)
	next := func(auth string) string {
		body := `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"d_ask","arguments":{},"requestState":"` + state +
			`","inputResponses":{"q1":{"action":"accept","content":{"a":"x"}}},"_meta":` + metaWithCapabilities(`{"elicitation":{}}`) + `}}`
		return send(direct, with(modernHeader("tools/call", "d_ask"), auth), body).body
	}
	if got := next(alice); strings.Contains(got, `"error"`) {
		t.Errorf("alice's next round: %s", got)
	}
	if got := next(bob); !strings.Contains(got, `"error"`) || !strings.Contains(got, `-32602`) {
		t.Errorf("bob's round with alice's requestState was not refused: %s", got)
	}
}

var requestState = regexp.MustCompile(`"requestState":"([^"]*)"`)

// requestStateOf returns the requestState of an answer.
func requestStateOf(t *testing.T, body string) string {
	t.Helper()
	m := requestState.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no requestState in %s", body)
	}
	return m[1]
}

// BenchmarkDirectPathWithOAuth is a tools/call of an OAuth caller, in
// process, on toolc's paths and on go-sdk's: at 2026-07-28 (the direct
// path) and in a 2025-11-25 session (the session path). The handler
// alone, without the network, with an audit line per call.
func BenchmarkDirectPathWithOAuth(b *testing.B) {
	direct, sdk, _, iss := oauthPair(b, io.Discard)
	auth := "Bearer " + iss.token(b, "alice", "tools")
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"toolc", direct}, {"go-sdk", sdk}} {
		b.Run("rev=2026-07-28/path="+h.name, func(b *testing.B) {
			header := modernHeader("tools/call", "d_echo")
			header.Set("Authorization", auth)
			body := callOf("1", "d_echo", `{"text":"a"}`, metaWithCapabilities(`{"roots":{"listChanged":true}}`))
			benchSend(b, h.h, header, body)
		})
		b.Run("rev=2025-11-25/path="+h.name, func(b *testing.B) {
			hd := legacyHeader("")
			hd.Del("MCP-Protocol-Version")
			hd.Set("Authorization", auth)
			x := send(h.h, hd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`)
			header := legacyHeader(x.header.Get("Mcp-Session-Id"))
			header.Set("Authorization", auth)
			send(h.h, header, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			benchSend(b, h.h, header, legacyCall("2", "d_echo", `{"text":"a"}`))
		})
	}
}

func benchSend(b *testing.B, h http.Handler, header http.Header, body string) {
	b.ReportAllocs()
	for b.Loop() {
		if a := send(h, header, body); a.status != http.StatusOK || !strings.Contains(a.body, `"result"`) {
			b.Fatalf("%d %s", a.status, a.body)
		}
	}
}

// TestSessionPathWithOAuth holds the session path to go-sdk's answers and
// audit lines for OAuth callers in a legacy session: it answers the
// session's own user's calls of tools the token holds every scope of, and
// leaves to go-sdk another user's request in the session (403), a call
// that needs a scope the token lacks, a list, and a call whose handler
// asks, which go-sdk runs again and audits once.
func TestSessionPathWithOAuth(t *testing.T) {
	audit, take := auditLines()
	direct, sdk, e, iss := oauthPair(t, audit)
	if e.sessionCap == nil || e.sessionCap.path == nil {
		t.Fatal("no session path with OAuth")
	}
	p := e.sessionCap.path
	alice := "Bearer " + iss.token(t, "alice", "tools")
	aliceAdmin := "Bearer " + iss.token(t, "alice", "tools admin")
	bob := "Bearer " + iss.token(t, "bob", "tools")
	as := func(session, auth string) http.Header {
		h := legacyHeader(session)
		h.Set("Authorization", auth)
		return h
	}
	open := func(h http.Handler, auth, caps string) string {
		hd := as("", auth)
		hd.Del("MCP-Protocol-Version")
		x := send(h, hd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"c","version":"1"}}}`)
		id := x.header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("initialize: %d %s", x.status, x.body)
		}
		send(h, as(id, auth), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return id
	}
	for _, tc := range []struct {
		name         string
		caps, caller string // the session's, and the request's token
		body         string
		direct       bool
	}{
		{"call", "{}", alice, legacyCall("1", "d_echo", `{"text":"<a>"}`), true},
		{"call, roots declared", `{"roots":{"listChanged":true}}`, alice, legacyCall("2", "d_echo", `{}`), true},
		{"call, the handler's error", "{}", alice, legacyCall("3", "d_fail", `{}`), true},
		{"call, invalid arguments", "{}", alice, legacyCall("4", "d_echo", `{"n":"x"}`), true},
		{"call, another token of the session's user", "{}", aliceAdmin, legacyCall("5", "d_rich", `{}`), true},
		{"call, another user", "{}", bob, legacyCall("6", "d_echo", `{}`), false},
		{"call, a step-up scope", "{}", alice, legacyCall("7", "d_rich", `{}`), false},
		{"call, a question", `{"sampling":{}}`, alice, legacyCall("8", "d_ask", `{}`), false},
		{"list", "{}", alice, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answers [2]httpAnswer
			var lines [2]string
			before := p.answered.Load()
			for i, h := range []http.Handler{direct, sdk} {
				session := open(h, alice, tc.caps)
				take()
				answers[i] = normal(send(h, as(session, tc.caller), tc.body))
				lines[i] = take()
				if i == 0 && (p.answered.Load() != before) != tc.direct {
					t.Errorf("the session path answered: %v, want %v", p.answered.Load() != before, tc.direct)
				}
			}
			if answers[0].status != answers[1].status || answers[0].body != answers[1].body || fmt.Sprint(answers[0].header) != fmt.Sprint(answers[1].header) {
				t.Fatalf("%s\nsession path: %d %v\n%q\ngo-sdk: %d %v\n%q", tc.body, answers[0].status, answers[0].header, answers[0].body, answers[1].status, answers[1].header, answers[1].body)
			}
			if lines[0] != lines[1] {
				t.Fatalf("audit lines\nsession path: %q\ngo-sdk:       %q", lines[0], lines[1])
			}
		})
	}
}

// FuzzDirectPathWithOAuth sends the same request, with one of four
// tokens (the tools scope, tools and admin, another user's, a scope of
// nothing here), to both handlers of an OAuth server: the same answers
// and the same audit lines, whichever path answered. The seeds are
// directCases.
func FuzzDirectPathWithOAuth(f *testing.F) {
	for i, tc := range directCases {
		f.Add(tc.body, tc.header.Get("Mcp-Method"), tc.header.Get("Mcp-Name"), uint8(i))
	}
	audit, take := auditLines()
	direct, sdk, _, iss := oauthPair(f, audit)
	tokens := []string{
		"Bearer " + iss.token(f, "alice", "tools"),
		"Bearer " + iss.token(f, "alice", "tools admin"),
		"Bearer " + iss.token(f, "bob", "tools"),
		"Bearer " + iss.token(f, "mallory", "other"),
	}
	f.Fuzz(func(t *testing.T, body, method, name string, who uint8) {
		h := modernHeader("", "")
		for k, v := range map[string]string{"Mcp-Method": method, "Mcp-Name": name} {
			if v != "" && !strings.ContainsAny(v, "\r\n\x00") {
				h.Set(k, v)
			}
		}
		h.Set("Authorization", tokens[int(who)%len(tokens)])
		take()
		got := normal(send(direct, h, body))
		gotAudit := take()
		want := normal(send(sdk, h, body))
		wantAudit := take()
		if got.status != want.status || fmt.Sprint(got.header) != fmt.Sprint(want.header) || got.body != want.body {
			t.Fatalf("%s\ndirect: %d %v %q\ngo-sdk: %d %v %q", body, got.status, got.header, got.body, want.status, want.header, want.body)
		}
		if gotAudit != wantAudit {
			t.Fatalf("%s: audit lines\ndirect: %q\ngo-sdk: %q", body, gotAudit, wantAudit)
		}
	})
}
