package httpapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// TestAuthCallCost: a /v1/call with OAuth allocates at most a few values
// more than one with --token (the caller in the request's context, and
// the handler's plugins.Caller), and writes its audit line word for word
// as before. It allocated 20 more: go-sdk's TokenInfo, made and put in the
// context of every /v1/ request though only MCP reads it, its second parse
// of the Authorization header, the audit line's key-value pairs boxed one
// by one, and the token copied to be hashed.
func TestAuthCallCost(t *testing.T) {
	res, err := compiler.Compile(compiler.Config{Dir: runtimetest.Root()}, "./runtime/testdata/guarded")
	if err != nil || res.HasErrors() {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	h := func(name string) plugins.Handler {
		return plugins.Handle(name, func(_ context.Context, req struct{ ID string }) (*plugins.Result, error) {
			return plugins.Text(req.ID), nil
		})
	}
	var audit bytes.Buffer
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	rt := runtime.New(runtime.Options{Audit: slog.New(slog.NewTextHandler(&audit, &slog.HandlerOptions{ReplaceAttr: noTime}))})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"guarded": runtime.Local(h("list_notes"), h("read_note"), h("write_note"))}); err != nil {
		t.Fatal(err)
	}
	iss := runtimetest.NewIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: runtimetest.TestResource})
	if err != nil {
		t.Fatal(err)
	}
	handler := func(opts httpapi.Options) http.Handler {
		return httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"}), opts)
	}
	call := func(h http.Handler, token string) func() {
		return func() {
			req := httptest.NewRequest("POST", "/v1/call", strings.NewReader(`{"name": "read_note", "arguments": {"id": "n1"}}`))
			req.Header.Set("Authorization", "Bearer "+token)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	}
	withToken := call(handler(httpapi.Options{Token: "s3cret-token"}), "s3cret-token")
	withOAuth := call(handler(httpapi.Options{OAuth: v}), iss.Token(t, jose.ES256, "alice", "notes:use notes:read"))

	withToken()
	if audit.Len() != 0 {
		t.Errorf("a --token call wrote an audit line: %s", &audit)
	}
	withOAuth()
	line := regexp.MustCompile(`duration_ms=[0-9.e-]+`).ReplaceAllString(audit.String(), "duration_ms=D")
	if want := "level=INFO msg=call audit=true subject=alice client=test-client tool=read_note outcome=ok duration_ms=D\n"; line != want {
		t.Errorf("audit line\n%q\nwant\n%q", line, want)
	}
	if raceOn {
		t.Log("allocations not counted under the race detector")
		return
	}
	audit.Reset()
	token, auth := testing.AllocsPerRun(200, withToken), testing.AllocsPerRun(200, withOAuth)
	// 5: the caller's context value and the request that carries it
	// (oauth.Middleware), and plugins.WithCaller's copy of the caller,
	// its scopes and its context value.
	if extra := auth - token; extra > 6 {
		t.Errorf("a call with OAuth allocates %.0f values, %.0f more than with --token; want at most 6 more", auth, extra)
	}
}
