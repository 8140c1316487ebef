package runtime_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

const testResource = "https://tools.example/mcp"

// testIssuer is an authorization server's metadata and JWKS on 127.0.0.1,
// with an RSA and an EC key; the tests sign the tokens.
type testIssuer struct {
	url     string
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	signers map[jose.SignatureAlgorithm]jose.Signer
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	iss := &testIssuer{signers: map[jose.SignatureAlgorithm]jose.Signer{}}
	var err error
	if iss.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if iss.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.url, "authorization_endpoint": iss.url + "/authorize", "token_endpoint": iss.url + "/token",
			"jwks_uri": iss.url + "/keys", "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &iss.rsa.PublicKey, KeyID: "rsa", Algorithm: "RS256", Use: "sig"},
			{Key: &iss.ec.PublicKey, KeyID: "ec", Algorithm: "ES256", Use: "sig"},
		}})
	})
	for alg, k := range map[jose.SignatureAlgorithm]struct {
		kid string
		key any
	}{jose.RS256: {"rsa", iss.rsa}, jose.ES256: {"ec", iss.ec}} {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k.key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.kid))
		if err != nil {
			t.Fatal(err)
		}
		iss.signers[alg] = s
	}
	return iss
}

// token signs an access token for testResource, alternating keys.
func (iss *testIssuer) token(t testing.TB, alg jose.SignatureAlgorithm, sub, scope string) string {
	t.Helper()
	raw, err := jwt.Signed(iss.signers[alg]).Claims(map[string]any{
		"iss": iss.url, "aud": testResource, "sub": sub, "client_id": "test-client", "scope": scope,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// tokenFor signs an RS256 access token for testResource for sub through
// the OAuth client client.
func (iss *testIssuer) tokenFor(t testing.TB, sub, client string) string {
	t.Helper()
	raw, err := jwt.Signed(iss.signers[jose.RS256]).Claims(map[string]any{
		"iss": iss.url, "aud": testResource, "sub": sub, "client_id": client,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// guardedServer serves the guarded contract with OAuth, in process, and
// returns its URL, the issuer and the audit log. Each handler answers its
// name and the id, and a second block with the caller it was given
// (plugins.CallerOf), if any.
func guardedServer(t testing.TB, opts ...runtime.Options) (string, *testIssuer, *testsync.Buffer) {
	t.Helper()
	rt, audit := guardedRuntime(t, opts...)
	iss := newTestIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.url, Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	return serveHTTP(t, rt, httpapi.Options{OAuth: v}).URL, iss, audit
}

// guardedRuntime is guardedServer's runtime, and its audit log.
func guardedRuntime(t testing.TB, opts ...runtime.Options) (*runtime.Runtime, *testsync.Buffer) {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{}, "./testdata/guarded")
	if err != nil || res.HasErrors() {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	echo := func(name string) plugins.Handler {
		return plugins.Handle(name, func(ctx context.Context, req struct{ ID string }) (*plugins.Result, error) {
			res := plugins.Text(name + " " + req.ID)
			if c, ok := plugins.CallerOf(ctx); ok {
				res.Content = append(res.Content, plugins.TextContent(fmt.Sprintf("caller %s %s %s", c.Subject, c.ClientID, strings.Join(c.Scopes, " "))))
			}
			return res, nil
		})
	}
	audit := &testsync.Buffer{}
	o := runtime.Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Audit = slog.New(slog.NewJSONHandler(audit, nil))
	rt := runtime.New(o)
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"guarded": runtime.Local(echo("list_notes"), echo("read_note"), echo("write_note"))}); err != nil {
		t.Fatal(err)
	}
	return rt, audit
}

func mcpSession(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOAuthChallenges(t *testing.T) {
	url, iss, _ := guardedServer(t)
	meta := `resource_metadata="https://tools.example/.well-known/oauth-protected-resource/mcp"`
	for _, path := range []string{"/mcp", "/v1/tools", "/metrics"} {
		r := do(t, "GET", url+path, "", nil)
		if r.status != 401 || r.header.Get("WWW-Authenticate") != "Bearer "+meta {
			t.Errorf("%s without a token: %d %q", path, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	// /healthz answers everyone, and tells the catalog only to a caller.
	if r := do(t, "GET", url+"/healthz", "", nil); r.status != 200 || strings.TrimSpace(r.body) != `{"status":"ok"}` {
		t.Errorf("/healthz without a token: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", url+"/healthz", "", map[string]string{"Authorization": "Bearer " + iss.token(t, jose.ES256, "a", "")}); !strings.Contains(r.body, `"catalog":"sha256:`) {
		t.Errorf("/healthz with a token: %d %s", r.status, r.body)
	}
	r := do(t, "GET", url+"/v1/tools", "", map[string]string{"Authorization": "Bearer not-a-jwt"})
	if ch := r.header.Get("WWW-Authenticate"); r.status != 401 || !strings.HasPrefix(ch, "Bearer "+meta+`, error="invalid_token"`) {
		t.Errorf("a bad token: %d %q", r.status, ch)
	}
	for _, path := range []string{oauth.MetadataPath, oauth.MetadataPath + "/mcp"} {
		r := do(t, "GET", url+path, "", nil)
		var m oauth.Metadata
		if err := json.Unmarshal([]byte(r.body), &m); err != nil || r.status != 200 || m.Resource != testResource ||
			!slices.Equal(m.AuthorizationServers, []string{iss.url}) || !slices.Equal(m.ScopesSupported, []string{"notes:read", "notes:use", "notes:write"}) {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
}

// TestOAuthScopes: each caller lists only the tools its token allows,
// over MCP and /v1/tools; a call without the scopes gets 403 and the
// challenge naming them; a token with them (step-up) then calls it.
func TestOAuthScopes(t *testing.T) {
	url, iss, audit := guardedServer(t)
	reader := iss.token(t, jose.RS256, "alice", "notes:use notes:read")

	s := mcpSession(t, url, reader)
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Name == "guarded_read_note" && fmt.Sprint(tool.Meta["io.toolc/scopes"]) != "[notes:read notes:use]" {
			t.Errorf("read_note's _meta = %v", tool.Meta)
		}
	}
	if !slices.Equal(names, []string{"guarded_list_notes", "guarded_read_note"}) {
		t.Errorf("MCP tools/list for notes:use notes:read = %v", names)
	}
	if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_read_note", Arguments: map[string]any{"id": "n1"}}); err != nil || res.IsError {
		t.Errorf("read_note: %v %v", res, err)
	}
	if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_write_note", Arguments: map[string]any{"id": "n1"}}); err == nil {
		t.Errorf("write_note without notes:write: %+v", res)
	}
	// The refusal's text names the tool by the MCP name the client called
	// (go-sdk's client shows only the status, so the body is read here).
	if r := do(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"guarded_write_note","arguments":{"id":"n1"}}}`,
		map[string]string{"Authorization": "Bearer " + reader, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}); r.status != 403 || !strings.Contains(r.body, `\"guarded_write_note\"`) || strings.Contains(r.body, `\"write_note\"`) {
		t.Errorf("MCP guarded_write_note with notes:read: %d %s, want 403 naming guarded_write_note", r.status, r.body)
	}

	post := func(token, body string) httpResult {
		return do(t, "POST", url+"/v1/call", body, map[string]string{"Authorization": "Bearer " + token})
	}
	r := post(reader, `{"name": "write_note", "arguments": {"id": "n1"}}`)
	if ch := r.header.Get("WWW-Authenticate"); r.status != 403 || !strings.HasPrefix(ch, `Bearer error="insufficient_scope", scope="notes:use notes:write", resource_metadata=`) {
		t.Errorf("/v1/call write_note with notes:read: %d %q %s", r.status, ch, r.body)
	}
	// The answer names the tool as the client called it.
	if r := post(reader, `{"name": "guarded_write_note", "arguments": {"id": "n1"}}`); r.status != 403 || !strings.Contains(r.body, `\"guarded_write_note\"`) {
		t.Errorf("/v1/call guarded_write_note with notes:read: %d %s, want 403 naming guarded_write_note", r.status, r.body)
	}
	writer := iss.token(t, jose.ES256, "alice", "notes:use notes:read notes:write")
	if res := decodeCall(t, post(writer, `{"name": "write_note", "arguments": {"id": "n1"}}`)); res.IsError || res.Content[0].Text != "write_note n1" {
		t.Errorf("write_note after stepping up: %+v", res)
	}
	// A client lists the tools before it calls one: write_note's id goes
	// in a header too (SEP-2243), which the list tells it.
	ws := mcpSession(t, url, writer)
	if _, err := ws.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res, err := ws.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_write_note", Arguments: map[string]any{"id": "n2"}}); err != nil || res.IsError {
		t.Errorf("MCP write_note after stepping up: %v %v", res, err)
	}
	// A hidden tool in ?tools= is as unknown as one that does not exist.
	hidden := do(t, "GET", url+"/v1/tools?tools=write_note", "", map[string]string{"Authorization": "Bearer " + reader})
	unknown := do(t, "GET", url+"/v1/tools?tools=burn_note", "", map[string]string{"Authorization": "Bearer " + reader})
	if hidden.status != 404 || unknown.status != 404 || strings.Replace(hidden.body, "write_note", "burn_note", -1) != unknown.body {
		t.Errorf("hidden %d %s, unknown %d %s", hidden.status, hidden.body, unknown.status, unknown.body)
	}
	// One audit line per call: who, what, how it ended; no arguments.
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	var calls []string
	for _, l := range lines {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil && e["audit"] == true {
			calls = append(calls, fmt.Sprintf("%v %v %v %v", e["subject"], e["client"], e["tool"], e["outcome"]))
			if strings.Contains(l, "n1") || strings.Contains(l, "n2") {
				t.Errorf("the audit line has the arguments: %s", l)
			}
		}
	}
	want := []string{
		"alice test-client guarded_read_note ok",
		"alice test-client guarded_write_note insufficient_scope",
		"alice test-client guarded_write_note insufficient_scope",
		"alice test-client write_note insufficient_scope",
		"alice test-client guarded_write_note insufficient_scope",
		"alice test-client write_note ok",
		"alice test-client guarded_write_note ok",
	}
	// The MCP refusal is answered at the HTTP layer without a log line
	// from the MCP server; drop it if absent.
	if !slices.Equal(calls, want) && !slices.Equal(calls, slices.Delete(slices.Clone(want), 1, 2)) {
		t.Errorf("audit lines:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// TestOAuthConcurrentCallers: 200 callers at once, with mixed scopes, each
// list exactly its own tools and call each tool it may and may not.
func TestOAuthConcurrentCallers(t *testing.T) {
	url, iss, _ := guardedServer(t)
	scopeSets := []string{"notes:use", "notes:use notes:read", "notes:use notes:write", "notes:use notes:read notes:write", "notes:read notes:write"}
	want := map[string][]string{
		scopeSets[0]: {"list_notes"},
		scopeSets[1]: {"list_notes", "read_note"},
		scopeSets[2]: {"list_notes", "write_note"},
		scopeSets[3]: {"list_notes", "read_note", "write_note"},
		scopeSets[4]: nil,
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200*4)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scopes := scopeSets[i%len(scopeSets)]
			alg := jose.RS256
			if i%2 == 1 {
				alg = jose.ES256
			}
			tok := iss.token(t, alg, fmt.Sprintf("user-%d", i), scopes)
			auth := map[string]string{"Authorization": "Bearer " + tok}
			r := do(t, "GET", url+"/v1/tools?format=openai-chat", "", auth)
			var tools []struct{ Function struct{ Name string } }
			json.Unmarshal([]byte(r.body), &tools)
			var got []string
			for _, tool := range tools {
				got = append(got, tool.Function.Name)
			}
			if r.status != 200 || !slices.Equal(got, want[scopes]) {
				errs <- fmt.Sprintf("caller %d (%s) listed %v (%d), want %v", i, scopes, got, r.status, want[scopes])
			}
			for _, name := range []string{"list_notes", "read_note", "write_note"} {
				r := do(t, "POST", url+"/v1/call", `{"name": "`+name+`", "arguments": {"id": "x"}}`, auth)
				may := slices.Contains(want[scopes], name)
				// Without the service's notes:use, a tool is unknown;
				// with it, a tool it may not call asks for a step-up.
				refused := 403
				if !strings.Contains(scopes, "notes:use") {
					refused = 404
				}
				// Each handler sees its own caller, never another's.
				me := fmt.Sprintf("caller user-%d test-client %s", i, scopes)
				if may && (r.status != 200 || !strings.Contains(r.body, name+" x") || !strings.Contains(r.body, `"text":"`+me+`"`)) || !may && r.status != refused {
					errs <- fmt.Sprintf("caller %d (%s) calling %s: %d %s", i, scopes, name, r.status, r.body)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 10 {
			t.Error(e)
		}
	}
	if n > 0 {
		t.Errorf("%d wrong answers", n)
	}
}

// TestOAuthSessionCap: the session cap closes OAuth sessions too. go-sdk
// binds a session to its user and refuses a DELETE of another user's, so
// the cap's own DELETE, which carried no user, closed nothing: past
// --max-sessions every new session stayed, and a caller with any valid
// token could open them until the server ran out of memory. Once it
// closed them, one caller opening sessions closed everyone's in turn; it
// now closes the sessions of the caller who holds the most.
func TestOAuthSessionCap(t *testing.T) {
	rt, _ := guardedRuntime(t)
	iss := newTestIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.url, Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, rt, httpapi.Options{OAuth: v, MCP: mcpserver.HTTPOptions{MaxSessions: 2}}).URL
	as := func(sub string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + iss.token(t, jose.RS256, sub, "notes:use"), "Accept": "application/json, text/event-stream"}
	}
	open := func(who map[string]string) string {
		t.Helper()
		r := do(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cap","version":"1"}}}`, who)
		id := r.header.Get("Mcp-Session-Id")
		if r.status != 200 || id == "" {
			t.Fatalf("initialize: %d %s", r.status, r.body)
		}
		return id
	}
	status := func(who map[string]string, id string) int {
		t.Helper()
		h := withHeaders(who, map[string]string{"Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"})
		return do(t, "POST", url+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, h).status
	}
	alice, bob := as("alice"), as("bob")
	a1, a2 := open(alice), open(alice)
	b1 := open(bob) // a third session: alice's first, the least recently used, is closed
	if got := status(alice, a1); got != http.StatusNotFound {
		t.Errorf("alice's first session, past the cap of 2: %d, want 404 (closed)", got)
	}
	if got, got2 := status(alice, a2), status(bob, b1); got != 200 || got2 != 200 {
		t.Errorf("the two newest sessions: %d and %d, want 200", got, got2)
	}
	// A caller who opens more sessions closes its own, the least recently
	// used of the one who holds the most, not the others' sessions.
	for range 5 {
		open(alice)
	}
	if got, got2 := status(bob, b1), status(alice, a2); got != 200 || got2 != http.StatusNotFound {
		t.Errorf("after five more of alice's sessions: bob's %d, alice's older one %d; want 200 and 404 (alice's own closed)", got, got2)
	}
}
