package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// TestCallerInProcess: an OAuth caller's subject, client and scopes reach
// a runtime.Local handler as plugins.CallerOf, over /v1/call, MCP with a
// session and MCP 2026-07-28; with --token, or none, the handler has no
// caller; and an embedder's own plugins.WithCaller reaches it through
// Runtime.Call.
func TestCallerInProcess(t *testing.T) {
	url, iss, _ := runtimetest.GuardedServer(t)
	tok := iss.Token(t, jose.RS256, "alice", "notes:use notes:read")
	const want = "caller alice test-client notes:use notes:read"

	r := runtimetest.Do(t, "POST", url+"/v1/call", `{"name": "read_note", "arguments": {"id": "n1"}}`, map[string]string{"Authorization": "Bearer " + tok})
	if res := runtimetest.DecodeCall(t, r); len(res.Content) != 2 || res.Content[1].Text != want {
		t.Errorf("/v1/call: %+v, want the caller block %q", res, want)
	}
	for _, revision := range []string{"2025-06-18", "2026-07-28"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "caller-test", Version: "0"}, nil)
		s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: runtimetest.BearerTransport{Token: tok}}},
			&mcp.ClientSessionOptions{ProtocolVersion: revision})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_read_note", Arguments: map[string]any{"id": "n1"}})
		s.Close()
		if err != nil || len(res.Content) != 2 || res.Content[1].(*mcp.TextContent).Text != want {
			t.Errorf("MCP %s: %v %v, want the caller block %q", revision, res, err, want)
		}
	}

	// A shared token says that the client knows it, not who it is.
	rt, _ := runtimetest.GuardedRuntime(t)
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{Token: "s3cret"})
	r = runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "read_note", "arguments": {"id": "n1"}}`, map[string]string{"Authorization": "Bearer s3cret"})
	if res := runtimetest.DecodeCall(t, r); len(res.Content) != 1 || res.Content[0].Text != "read_note n1" {
		t.Errorf("/v1/call with --token: %+v, want no caller", res)
	}
	if res, err := rt.Call(context.Background(), "read_note", json.RawMessage(`{"id":"n1"}`)); err != nil || len(res.Content) != 1 {
		t.Errorf("Runtime.Call without a caller: %+v %v", res, err)
	}
	ctx := plugins.WithCaller(context.Background(), plugins.Caller{Subject: "svc", ClientID: "cron", Scopes: []string{"notes:use"}})
	if res, err := rt.Call(ctx, "read_note", json.RawMessage(`{"id":"n1"}`)); err != nil || len(res.Content) != 2 || res.Content[1].Text != "caller svc cron notes:use" {
		t.Errorf("Runtime.Call with an embedder's caller: %+v %v", res, err)
	}
	// Runtime.Call holds an OAuth caller of ctx to the scopes, as the HTTP
	// handler does.
	ctx = oauth.WithCaller(context.Background(), &oauth.Caller{Subject: "bob", Scopes: []string{"notes:use"}})
	var scopeErr *runtime.InsufficientScopeError
	if _, err := rt.Call(ctx, "write_note", json.RawMessage(`{"id":"n1"}`)); !errors.As(err, &scopeErr) || strings.Join(scopeErr.Scopes, " ") != "notes:use notes:write" {
		t.Errorf("Runtime.Call of write_note for notes:use: %v, want an InsufficientScopeError", err)
	}
	ctx = oauth.WithCaller(context.Background(), &oauth.Caller{Subject: "eve", Scopes: []string{"notes:write"}})
	if _, err := rt.Call(ctx, "write_note", json.RawMessage(`{"id":"n1"}`)); !errors.Is(err, runtime.ErrUnknownTool) || err.Error() != `unknown tool "write_note"` {
		t.Errorf("Runtime.Call of write_note without the service's scope: %v, want unknown tool", err)
	}
}

// TestAuditArguments: an audit line never has the call's arguments, unless
// Options.AuditArguments asks for them.
func TestAuditArguments(t *testing.T) {
	const secret = "diary-entry-4711"
	for _, on := range []bool{false, true} {
		url, iss, audit := runtimetest.GuardedServer(t, runtime.Options{AuditArguments: on})
		auth := map[string]string{"Authorization": "Bearer " + iss.Token(t, jose.ES256, "alice", "notes:use notes:read")}
		for _, body := range []string{
			`{"name": "read_note", "arguments": {"id": "` + secret + `"}}`,
			`{"name": "read_note", "arguments": "{\"id\": \"` + secret + `\"}"}`,
			`{"name": "write_note", "arguments": {"id": "` + secret + `"}}`,        // refused: notes:write
			`{"name": "read_note", "arguments": {"id": 7, "x": "` + secret + `"}}`, // invalid
		} {
			runtimetest.Do(t, "POST", url+"/v1/call", body, auth)
		}
		s := runtimetest.MCPSession(t, url, iss.Token(t, jose.ES256, "alice", "notes:use notes:read"))
		s.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_read_note", Arguments: map[string]any{"id": secret}})
		log := audit.String()
		if n := strings.Count(log, `"audit":true`); n != 5 {
			t.Errorf("AuditArguments %t: %d audit lines, want 5:\n%s", on, n, log)
		}
		if got := strings.Count(log, secret); on && got != 5 || !on && got != 0 {
			t.Errorf("AuditArguments %t: the argument value is in %d lines:\n%s", on, got, log)
		}
	}
}
