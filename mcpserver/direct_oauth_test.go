package mcpserver

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/toolc/toolc/runtime"
)

// auditBuffer keeps the audit lines written, without their times.
type auditBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (a *auditBuffer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.Write(p)
}

// take returns the lines written since the last take.
func (a *auditBuffer) take() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.buf.String()
	a.buf.Reset()
	return s
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
	var audit auditBuffer
	direct, sdk, e, iss := oauthPair(t, &audit)
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
		audit.take()
		before := e.direct.answered.Load()
		raw := send(direct, header, body)
		got := normal(raw)
		answered := e.direct.answered.Load() != before
		gotAudit := audit.take()
		want := normal(send(sdk, header, body))
		wantAudit := audit.take()
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
	if lines := audit.take(); lines != "" {
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

// BenchmarkDirectPathWithOAuth is a 2026-07-28 tools/call of an OAuth
// caller, in process, on the direct path and on go-sdk's: the handler
// alone, without the network, with an audit line per call.
func BenchmarkDirectPathWithOAuth(b *testing.B) {
	direct, sdk, _, iss := oauthPair(b, io.Discard)
	header := modernHeader("tools/call", "d_echo")
	header.Set("Authorization", "Bearer "+iss.token(b, "alice", "tools"))
	body := callOf("1", "d_echo", `{"text":"a"}`, metaWithCapabilities(`{"roots":{"listChanged":true}}`))
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"direct", direct}, {"go-sdk", sdk}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if a := send(h.h, header, body); a.status != http.StatusOK {
					b.Fatalf("%d %s", a.status, a.body)
				}
			}
		})
	}
}
