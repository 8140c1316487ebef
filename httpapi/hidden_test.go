package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/runtimetest"
)

// TestHiddenToolLooksUnknown: to a caller whose token lacks a tool's
// service scopes, the tool does not exist. Every answer about it, on
// /v1/call, /v1/tools and /mcp in both kinds of revision, is the answer
// about a tool that does not exist, the same bytes but for the name
// (status, headers, body), even where the request would be wrong for the
// hidden tool (a missing or bad Mcp-Param header). A caller with the
// service's scopes may learn of the tool, and is asked to step up.
func TestHiddenToolLooksUnknown(t *testing.T) {
	url, iss, audit := runtimetest.GuardedServer(t)
	// notes:read and notes:write, but not the service's notes:use.
	outsider := map[string]string{"Authorization": "Bearer " + iss.Token(t, jose.RS256, "mallory", "notes:read notes:write")}
	// Names of one length, so that Content-Length agrees too.
	const hidden, unknown = "write_note", "xrite_note"
	const hiddenMCP, unknownMCP = "guarded_" + hidden, "guarded_" + unknown

	// same fails unless a and b are the same bytes once a's hidden name
	// is b's unknown one.
	same := func(what string, a, b runtimetest.HTTPResult) {
		t.Helper()
		if ra, rb := strings.ReplaceAll(raw(a), hidden, unknown), raw(b); ra != rb {
			t.Errorf("%s: the hidden tool's answer differs from the unknown tool's:\nhidden:\n%s\nunknown:\n%s", what, ra, rb)
		}
		if a.Status < 400 && !strings.Contains(a.Body, `"error":{"code":-32602`) {
			t.Errorf("%s: %d %s for a tool that does not exist", what, a.Status, a.Body)
		}
	}
	call := func(name string, header map[string]string) runtimetest.HTTPResult {
		return runtimetest.Do(t, "POST", url+"/v1/call", `{"name": "`+name+`", "arguments": {"id": "n1"}}`, header)
	}
	same("/v1/call", call(hidden, outsider), call(unknown, outsider))
	tools := func(names string, header map[string]string) runtimetest.HTTPResult {
		return runtimetest.Do(t, "GET", url+"/v1/tools?tools="+names, "", header)
	}
	same("/v1/tools?tools=", tools(hidden, outsider), tools(unknown, outsider))

	// The suggestions of an unknown name come from the tools the caller
	// may see: for one that sees only list_notes, never another.
	user := map[string]string{"Authorization": "Bearer " + iss.Token(t, jose.ES256, "bob", "notes:use")}
	r := tools("write_notes", user)
	if _, closest, _ := strings.Cut(r.Body, "closest:"); r.Status != 404 || strings.Contains(closest, "write_note") || strings.Contains(closest, "read_note") || !strings.Contains(closest, "list_notes") {
		t.Errorf("/v1/tools?tools=write_notes for notes:use: %d %s, want list_notes suggested and no other tool named", r.Status, r.Body)
	}

	// MCP of a revision with sessions: initialize, then the two calls in
	// the one session.
	init := runtimetest.Do(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		withHeaders(outsider, map[string]string{"Accept": "application/json, text/event-stream"}))
	session := init.Header.Get("Mcp-Session-Id")
	if init.Status != 200 || session == "" {
		t.Fatalf("initialize: %d %s", init.Status, init.Body)
	}
	legacy := withHeaders(outsider, map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"})
	runtimetest.Do(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy)
	mcpCall := func(name string, header map[string]string, meta string) runtimetest.HTTPResult {
		return runtimetest.Do(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":{"id":"n1"}`+meta+`}}`, header)
	}
	h, u := mcpCall(hiddenMCP, legacy, ""), mcpCall(unknownMCP, legacy, "")
	same("MCP 2025-06-18 tools/call", h, u)
	if !strings.Contains(u.Body, `"code":-32602`) || !strings.Contains(u.Body, `unknown tool \"`+unknownMCP+`\"`) {
		t.Errorf("MCP 2025-06-18: the unknown tool's answer is %s, want go-sdk's -32602", u.Body)
	}

	// MCP 2026-07-28, without sessions: no Mcp-Param-Note-Id header, and
	// a bad one, which a visible write_note would be refused for.
	meta, _ := json.Marshal(runtimetest.Meta2026("2026-07-28"))
	for _, param := range []string{"", "n1", "n\x80"} {
		modern := func(name string) map[string]string {
			h := withHeaders(outsider, map[string]string{"Accept": "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name})
			if param != "" {
				h["Mcp-Param-Note-Id"] = param
			}
			return h
		}
		h, u := mcpCall(hiddenMCP, modern(hiddenMCP), `,"_meta":`+string(meta)), mcpCall(unknownMCP, modern(unknownMCP), `,"_meta":`+string(meta))
		same(fmt.Sprintf("MCP 2026-07-28 tools/call, Mcp-Param-Note-Id %q", param), h, u)
	}

	// /healthz counts only the tools the caller sees.
	if r := runtimetest.Do(t, "GET", url+"/healthz", "", outsider); !strings.Contains(r.Body, `"tools":0}`) {
		t.Errorf("/healthz for a caller who sees no tool: %s", r.Body)
	}
	if r := runtimetest.Do(t, "GET", url+"/healthz", "", user); !strings.Contains(r.Body, `"tools":1}`) {
		t.Errorf("/healthz for a caller who sees list_notes: %s", r.Body)
	}

	// /metrics shows a caller the series of the tools it sees.
	all := map[string]string{"Authorization": "Bearer " + iss.Token(t, jose.ES256, "carol", "notes:use notes:read notes:write")}

	// /healthz's catalog fingerprint is that of the tools the caller sees:
	// the whole catalog's would tell one who sees none that hidden tools
	// exist, and when they change.
	fingerprint := func(who map[string]string) string {
		var h struct{ Catalog string }
		json.Unmarshal([]byte(runtimetest.Do(t, "GET", url+"/healthz", "", who).Body), &h)
		return h.Catalog
	}
	none, _ := (&catalog.Catalog{}).FingerprintOfTools()
	whole, some := fingerprint(all), fingerprint(user)
	if got := fingerprint(outsider); got != none {
		t.Errorf("/healthz for a caller who sees no tool has the fingerprint %s, want %s, an empty catalog's", got, none)
	}
	if whole == none || some == none || some == whole || !strings.HasPrefix(whole, "sha256:") {
		t.Errorf("/healthz fingerprints: every tool %s, some %s, none %s; want three different ones", whole, some, none)
	}
	for _, tool := range []string{"list_notes", "write_note"} {
		if r := call(tool, all); r.Status != 200 {
			t.Fatalf("%s with every scope: %d %s", tool, r.Status, r.Body)
		}
	}
	for _, tc := range []struct {
		who        map[string]string
		see, never []string
	}{
		{all, []string{`tool="write_note"`, `tool="list_notes"`}, nil},
		{user, []string{`tool="list_notes"`}, []string{"write_note"}},
		{outsider, nil, []string{"write_note", "list_notes", "toolc_calls_total"}},
	} {
		r := runtimetest.Do(t, "GET", url+"/metrics", "", tc.who)
		for _, s := range tc.see {
			if !strings.Contains(r.Body, s) {
				t.Errorf("/metrics for %s lacks %s:\n%s", tc.who["Authorization"][:20], s, r.Body)
			}
		}
		for _, s := range tc.never {
			if strings.Contains(r.Body, s) {
				t.Errorf("/metrics for a caller who may not see it names %s:\n%s", s, r.Body)
			}
		}
	}

	// The same caller with notes:use learns that write_note exists, and
	// which scopes to ask for.
	stepper := map[string]string{"Authorization": "Bearer " + iss.Token(t, jose.ES256, "mallory", "notes:use notes:read")}
	if r := call(hidden, stepper); r.Status != 403 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="notes:use notes:write"`) {
		t.Errorf("/v1/call write_note with notes:use: %d %q, want the step-up challenge", r.Status, r.Header.Get("WWW-Authenticate"))
	}

	// The operator's audit log tells the two apart.
	var outcomes []string
	for _, l := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil && e["audit"] == true && e["subject"] == "mallory" {
			outcomes = append(outcomes, fmt.Sprintf("%v %v", e["tool"], e["outcome"]))
		}
	}
	for _, want := range []string{"write_note hidden", "xrite_note unknown_tool", "guarded_write_note hidden", "write_note insufficient_scope"} {
		if !slices.Contains(outcomes, want) {
			t.Errorf("audit log lacks %q: %v", want, outcomes)
		}
	}
	// One line for each MCP call of the hidden tool: in the session, and
	// each 2026-07-28 one, which a server without tools answers.
	if n := countOf(outcomes, "guarded_write_note hidden"); n != 4 {
		t.Errorf("%d audit lines of MCP calls of the hidden tool, want 4: %v", n, outcomes)
	}
}

// raw is an HTTP answer as bytes to compare: the status, the headers but
// Date, sorted, and the body.
func raw(r runtimetest.HTTPResult) string {
	var lines []string
	for k, vs := range r.Header {
		if k != "Date" {
			lines = append(lines, k+": "+strings.Join(vs, ", "))
		}
	}
	slices.Sort(lines)
	return fmt.Sprintf("%d\n%s\n\n%s", r.Status, strings.Join(lines, "\n"), r.Body)
}

func countOf(list []string, s string) int {
	n := 0
	for _, e := range list {
		if e == s {
			n++
		}
	}
	return n
}

func withHeaders(hs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	return out
}
