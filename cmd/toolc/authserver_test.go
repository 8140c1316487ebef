package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolc/toolc/internal/authserver"
)

// The tests against a real authorization server run toolc serve on
// testdata/notes (a contract whose tools need scopes, and its handler
// plugin) with --auth-issuer naming zitadel/oidc's OpenID Provider, started
// in the test (internal/authserver), and take every token from that
// server's endpoints: by client credentials, and by the authorization code
// flow with PKCE, whose login a test posts as a browser would.

const notesPattern = "./cmd/toolc/testdata/notes"

// scopeSets are the clients of the authorization server, one per set of
// scopes it may grant, and the tools each set sees.
var scopeSets = []struct {
	client string
	scopes []string
	tools  []string
}{
	{"svc-none", nil, nil},
	{"svc-use", []string{"notes:use"}, []string{"list_notes"}},
	{"svc-read", []string{"notes:use", "notes:read"}, []string{"list_notes", "read_note"}},
	{"svc-write", []string{"notes:use", "notes:write"}, []string{"list_notes", "write_note"}},
	{"svc-all", []string{"notes:use", "notes:read", "notes:write"}, []string{"list_notes", "read_note", "write_note"}},
}

var allNoteScopes = []string{"notes:use", "notes:read", "notes:write"}

const otherResource = "http://127.0.0.1:1/mcp"

// authServe is toolc serve behind a real authorization server.
type authServe struct {
	as       *authserver.Server
	url      string // http://127.0.0.1:PORT
	resource string // url + "/mcp"
	stderr   *lockedBuffer
	cmd      *exec.Cmd
}

func startAuthServe(t *testing.T) *authServe {
	t.Helper()
	port := freePort(t)
	s := &authServe{url: fmt.Sprintf("http://127.0.0.1:%d", port), stderr: &lockedBuffer{}}
	s.resource = s.url + "/mcp"
	cfg := authserver.Config{
		Resources: []string{s.resource, otherResource},
		Clients: []authserver.Client{
			{ID: "svc-other", Secret: "s", Scopes: allNoteScopes, Audience: []string{otherResource}},
			{ID: "svc-expired", Secret: "s", Scopes: allNoteScopes, Audience: []string{s.resource}, Lifetime: -2 * time.Minute},
			{ID: "cli", RedirectURIs: []string{"http://127.0.0.1:1/callback"}, Scopes: allNoteScopes},
		},
		Users: []authserver.User{{Name: "alice", Password: "wonderland", Scopes: allNoteScopes}},
	}
	for _, set := range scopeSets {
		cfg.Clients = append(cfg.Clients, authserver.Client{ID: set.client, Secret: set.client + "-secret", Scopes: set.scopes, Audience: []string{s.resource}})
	}
	as, err := authserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Stop)
	s.as = as
	s.cmd = toolcCmd(t, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--auth-issuer", as.Issuer, "--auth-resource", s.resource, notesPattern)
	s.cmd.Env = append(s.cmd.Env, "TOOLC_TOKEN=") // the last one wins
	_, s.stderr = startServeCmd(t, s.cmd)
	return s
}

// token gets a client credentials token for one of scopeSets' clients.
func (s *authServe) token(t testing.TB, client string) string {
	t.Helper()
	tok, err := s.as.ClientCredentials(context.Background(), client, client+"-secret", allNoteScopes, "")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type answer struct {
	status    int
	challenge string
	body      string
}

// do sends one request to toolc with token ("" for none).
func (s *authServe) do(client *http.Client, method, path, token, body string) (answer, error) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(data)}, err
}

// listV1 returns the tools GET /v1/tools shows the caller, by name.
func (s *authServe) listV1(client *http.Client, token string) ([]string, error) {
	a, err := s.do(client, "GET", "/v1/tools", token, "")
	if err != nil {
		return nil, err
	}
	if a.status != 200 {
		return nil, fmt.Errorf("GET /v1/tools: %d %s %s", a.status, a.challenge, a.body)
	}
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(a.body), &tools); err != nil {
		return nil, err
	}
	names := []string{}
	for _, tl := range tools {
		names = append(names, strings.TrimPrefix(tl.Name, "notes_"))
	}
	slices.Sort(names)
	return names, nil
}

// checkCaller lists and calls every tool as a caller whose token holds
// the tools of want, and says what was wrong: the list must be want, a
// call of a tool in it must answer for id, any other call must be 403
// with the insufficient_scope challenge, or, for a caller without the
// service's notes:use (which list_notes alone needs), the 404 of a tool
// that does not exist.
func (s *authServe) checkCaller(client *http.Client, token string, want []string, id string) error {
	got, err := s.listV1(client, token)
	if err != nil {
		return err
	}
	if !slices.Equal(got, append([]string{}, want...)) {
		return fmt.Errorf("sees %v, want %v", got, want)
	}
	for _, tool := range []string{"list_notes", "read_note", "write_note"} {
		a, err := s.do(client, "POST", "/v1/call", token, fmt.Sprintf(`{"name": %q, "arguments": {"id": %q}}`, tool, id))
		if tool == "list_notes" {
			a, err = s.do(client, "POST", "/v1/call", token, `{"name": "list_notes", "arguments": {}}`)
		}
		if err != nil {
			return err
		}
		wantText := map[string]string{"list_notes": "notes: n1 n2", "read_note": "read " + id, "write_note": "wrote " + id}[tool]
		switch {
		case slices.Contains(want, tool) && (a.status != 200 || !strings.Contains(a.body, `"text":"`+wantText+`"`)):
			return fmt.Errorf("%s: %d %s, want 200 with %q", tool, a.status, a.body, wantText)
		case !slices.Contains(want, tool) && !slices.Contains(want, "list_notes") && (a.status != 404 || a.challenge != "" || strings.TrimSpace(a.body) != `{"error":"unknown tool \"`+tool+`\""}`):
			return fmt.Errorf("%s: %d %q %s, want the 404 of an unknown tool", tool, a.status, a.challenge, a.body)
		case !slices.Contains(want, tool) && slices.Contains(want, "list_notes") && (a.status != 403 || !strings.Contains(a.challenge, `error="insufficient_scope"`)):
			return fmt.Errorf("%s: %d %q %s, want 403 insufficient_scope", tool, a.status, a.challenge, a.body)
		}
	}
	return nil
}

func toolNames(res *mcp.ListToolsResult) []string {
	names := []string{}
	for _, tl := range res.Tools {
		names = append(names, strings.TrimPrefix(tl.Name, "notes_"))
	}
	slices.Sort(names)
	return names
}

// TestAuthServer runs toolc serve behind zitadel/oidc's OpenID Provider and
// drives it with the go-sdk client's OAuth support (client credentials,
// and authorization code with PKCE and step-up), with the TypeScript SDK
// client's, and with tokens of every kind that must be refused.
func TestAuthServer(t *testing.T) {
	t.Parallel()
	s := startAuthServe(t)
	ctx := context.Background()
	plain := &http.Client{Timeout: 30 * time.Second}

	t.Run("go-sdk client credentials", func(t *testing.T) {
		// The client starts with no token: the 401's resource_metadata
		// leads it to the resource's metadata, that to the authorization
		// server's, and that to its token endpoint.
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: "svc-read", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "svc-read-secret"}, Issuer: s.as.Issuer},
		})
		if err != nil {
			t.Fatal(err)
		}
		session, err := mcp.NewClient(&mcp.Implementation{Name: "cc", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.resource, OAuthHandler: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		list, err := session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolNames(list); !slices.Equal(got, []string{"list_notes", "read_note"}) {
			t.Errorf("tools/list: %v", got)
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "notes_read_note", Arguments: map[string]any{"id": "n1"}})
		if err != nil || resultText(res) != "read n1" {
			t.Errorf("read_note: %v %v", res, err)
		}
		// write_note needs a scope the server never grants this client:
		// the step-up gets the same scopes, and the call fails.
		if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "notes_write_note", Arguments: map[string]any{"id": "n1"}}); err == nil {
			t.Error("write_note without notes:write succeeded")
		}
		// Same for a tool that does not exist at all: hidden and unknown
		// look alike in the list.
		if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "notes_nope", Arguments: map[string]any{}}); err == nil {
			t.Error("an unknown tool succeeded")
		}
	})

	t.Run("go-sdk authorization code, step-up", func(t *testing.T) {
		// A least-privilege client asks only for notes:use first; then a
		// call that needs more gets 403 insufficient_scope, and the
		// client authorizes again for the union of the scopes.
		var logins atomic.Int32
		var asked [][]string
		var mu sync.Mutex
		h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			PreregisteredClient: &oauthex.ClientCredentials{ClientID: "cli", Issuer: s.as.Issuer},
			RedirectURL:         "http://127.0.0.1:1/callback",
			ScopeFilter: func(discovered []string) []string {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, discovered)
				if len(asked) == 1 {
					return []string{"notes:use"}
				}
				return discovered
			},
			AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				logins.Add(1)
				if !strings.Contains(args.URL, "code_challenge_method=S256") || !strings.Contains(args.URL, "resource=") {
					return nil, fmt.Errorf("authorization URL without PKCE or resource: %s", args.URL)
				}
				code, state, iss, err := authserver.Login(ctx, args.URL, "alice", "wonderland")
				if err != nil {
					return nil, err
				}
				return &auth.AuthorizationResult{Code: code, State: state, Iss: iss}, nil
			},
			AcceptUnadvertisedIss: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		session, err := mcp.NewClient(&mcp.Implementation{Name: "code", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.resource, OAuthHandler: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		list, err := session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolNames(list); !slices.Equal(got, []string{"list_notes"}) {
			t.Errorf("tools/list with notes:use: %v", got)
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "notes_write_note", Arguments: map[string]any{"id": "n7"}})
		if err != nil || resultText(res) != "wrote n7" {
			t.Fatalf("write_note after step-up: %v %v", res, err)
		}
		if n := logins.Load(); n != 2 {
			t.Errorf("%d logins, want 2 (the first authorization and the step-up)", n)
		}
		mu.Lock()
		if len(asked) != 2 || !slices.Equal(asked[1], []string{"notes:use", "notes:write"}) {
			t.Errorf("scopes asked for: %v; want the step-up to ask for write_note's, notes:use notes:write", asked)
		}
		mu.Unlock()
		list, err = session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolNames(list); !slices.Equal(got, []string{"list_notes", "write_note"}) {
			t.Errorf("tools/list after step-up: %v", got)
		}
	})

	tsRan := false // the TypeScript client is skipped without Node and its SDK
	t.Run("typescript client credentials", func(t *testing.T) {
		node, sdk := tsSDK(t)
		tsRan = true
		script, err := filepath.Abs("testdata/tsauthclient.mjs")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(node, script, s.resource, "svc-write", "svc-write-secret", s.as.Issuer, "notes:use notes:read notes:write")
		cmd.Env = append(os.Environ(), "TOOLC_TS_SDK="+sdk)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the TypeScript client: %v\n%s", err, out)
		}
		var got struct {
			Tools   []string
			Wrote   string
			ReadErr string `json:"readError"`
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for i := range got.Tools {
			got.Tools[i] = strings.TrimPrefix(got.Tools[i], "notes_")
		}
		if !slices.Equal(got.Tools, []string{"list_notes", "write_note"}) || got.Wrote != "wrote ts1" || got.ReadErr == "" {
			t.Errorf("the TypeScript client: %+v\n%s", got, out)
		}
	})

	// Key rotation: the first token with an unknown kid after toolc's
	// start makes it refetch the keys at once (later ones, at most once
	// every 30 seconds; oauth's TestRotation checks that window).
	t.Run("rotation under load", func(t *testing.T) {
		old := s.as.KeyID()
		var rotated atomic.Bool
		var wrong, newKid atomic.Int32
		var firstErr sync.Once
		// Halfway through, the issuer rotates to an ES256 key (keeping the
		// old one published, as a graceful rotation does); the callers of
		// the later rounds get tokens of the new key, the first of which
		// makes toolc refetch the keys.
		runCallers(t, s, 200, 4, func(i, round int, err error) {
			if err != nil {
				wrong.Add(1)
				firstErr.Do(func() { t.Errorf("caller %d, round %d: %v", i, round, err) })
			}
		}, func(round int) {
			if round == 2 && rotated.CompareAndSwap(false, true) {
				if _, err := s.as.Rotate(jose.ES256, true); err != nil {
					t.Error(err)
				}
			}
			if rotated.Load() {
				newKid.Add(1)
			}
		})
		if s.as.KeyID() == old {
			t.Fatal("the issuer did not rotate")
		}
		if n := wrong.Load(); n > 0 {
			t.Errorf("%d wrong answers from 200 callers while the keys rotated", n)
		}
		if newKid.Load() == 0 {
			t.Error("no caller used a token of the new key")
		}
	})

	t.Run("refused tokens", func(t *testing.T) {
		good := s.token(t, "svc-all")
		expired, err := s.as.ClientCredentials(ctx, "svc-expired", "s", allNoteScopes, "")
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.as.ClientCredentials(ctx, "svc-other", "s", allNoteScopes, "")
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(good, ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var header map[string]any
		h, _ := base64.RawURLEncoding.DecodeString(parts[0])
		json.Unmarshal(h, &header)
		// A payload with a client_id changed keeps the server's signature,
		// which then no longer matches.
		tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"svc-all"`, `"svc-alx"`, -1))) + "." + parts[2]
		none := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"alg":"none","kid":%q}`, header["kid"]))) + "." + parts[1] + "."
		// A made-up kid: toolc does not find it, and does not refetch the
		// keys within 30 s of the rotation's refetch.
		madeUp := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"made-up","typ":"JWT"}`)) + "." + parts[1] + "." + parts[2]
		meta := `resource_metadata="` + s.url + `/.well-known/oauth-protected-resource/mcp"`
		for _, tt := range []struct {
			name, token, desc string
		}{
			{"missing", "", ""},
			{"expired", expired, "the token expired"},
			{"wrong audience", other, "does not include this resource"},
			{"bad signature", tampered, "bad signature"},
			{"alg none", none, "accepted algorithm"},
			{"unknown kid", madeUp, "a key that the issuer does not publish"},
		} {
			for _, path := range []string{"/v1/tools", "/mcp"} {
				method, body := "GET", ""
				if path == "/mcp" {
					method, body = "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
				}
				a, err := s.do(plain, method, path, tt.token, body)
				if err != nil {
					t.Fatal(err)
				}
				want := "Bearer " + meta
				if tt.desc != "" {
					want += `, error="invalid_token", error_description="invalid token: `
				}
				if a.status != 401 || !strings.HasPrefix(a.challenge, want) || !strings.Contains(a.challenge, tt.desc) || strings.Contains(a.body, "notes_") {
					t.Errorf("%s on %s: %d %q %s; want 401 %q with %q", tt.name, path, a.status, a.challenge, a.body, want, tt.desc)
				}
			}
		}
		if err := s.checkCaller(plain, good, scopeSets[4].tools, "good"); err != nil {
			t.Errorf("the good token beside them: %v", err)
		}
	})

	t.Run("200 concurrent callers", func(t *testing.T) {
		var wrong atomic.Int32
		var firstErr sync.Once
		runCallers(t, s, 200, 3, func(i, round int, err error) {
			if err != nil {
				wrong.Add(1)
				firstErr.Do(func() { t.Errorf("caller %d, round %d: %v", i, round, err) })
			}
		}, nil)
		if n := wrong.Load(); n > 0 {
			t.Errorf("%d wrong answers from 200 callers", n)
		}
	})

	t.Run("issuer down", func(t *testing.T) {
		// Tokens issued before the outage and never shown to toolc: they
		// verify against the cached keys while the issuer is unreachable.
		fresh := make([]string, len(scopeSets))
		for i, set := range scopeSets {
			fresh[i] = s.token(t, set.client)
		}
		s.as.Stop()
		for i, set := range scopeSets {
			if err := s.checkCaller(plain, fresh[i], set.tools, "down"); err != nil {
				t.Errorf("%s while the issuer is down: %v", set.client, err)
			}
		}
		if a, _ := s.do(plain, "GET", "/healthz", "", ""); a.status != 200 {
			t.Errorf("/healthz while the issuer is down: %d %s", a.status, a.body)
		}
		if err := s.as.Restart(); err != nil {
			t.Fatal(err)
		}
	})

	// Every call above logged its audit line, and no argument: the
	// refused ones too, over MCP (the TypeScript client's read_note) as
	// over /v1/call.
	time.Sleep(100 * time.Millisecond)
	for _, want := range []string{
		"audit=true subject=svc-all client=svc-all tool=read_note outcome=ok",
		"audit=true subject=svc-use client=svc-use tool=write_note outcome=insufficient_scope",
		"audit=true subject=alice client=cli tool=notes_write_note outcome=ok",
		"audit=true subject=svc-write client=svc-write tool=notes_read_note outcome=insufficient_scope",
	} {
		if strings.Contains(want, "notes_read_note") && !tsRan {
			continue
		}
		if !strings.Contains(s.stderr.String(), want) && !t.Failed() {
			t.Errorf("no audit line %q", want)
		}
	}
	if strings.Contains(s.stderr.String(), `"id"`) || strings.Contains(s.stderr.String(), "c1-r0") {
		t.Errorf("audit lines:\n%s", tail(s.stderr.String(), 2000))
	}
	if strings.Contains(s.stderr.String(), "panic") {
		t.Errorf("toolc panicked:\n%s", s.stderr)
	}
}

// runCallers runs n callers at once, each with the token of one of
// scopeSets' clients (mixed), for rounds rounds: each round gets a new
// token from the authorization server and checks the caller's list and
// calls. report gets every round's outcome; beforeRound, when set, runs
// before each caller's round.
func runCallers(t *testing.T, s *authServe, n, rounds int, report func(i, round int, err error), beforeRound func(round int)) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set := scopeSets[i%len(scopeSets)]
			client := &http.Client{Timeout: time.Minute}
			for round := range rounds {
				if beforeRound != nil {
					beforeRound(round)
				}
				tok, err := s.as.ClientCredentials(context.Background(), set.client, set.client+"-secret", allNoteScopes, "")
				if err == nil {
					err = s.checkCaller(client, tok, set.tools, fmt.Sprintf("c%d-r%d", i, round))
				}
				if err == nil {
					err = s.checkMCP(client, tok, set.tools, fmt.Sprintf("m%d-r%d", i, round))
				}
				report(i, round, err)
			}
		}()
	}
	wg.Wait()
}

// bearer adds a token to every request, as a client that got it out of
// band does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// checkMCP is checkCaller over MCP, with go-sdk's client: tools/list must
// be want, and a call of each tool in it must answer for id.
func (s *authServe) checkMCP(client *http.Client, token string, want []string, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hc := &http.Client{Transport: bearer{token, client.Transport}, Timeout: client.Timeout}
	if hc.Transport.(bearer).next == nil {
		hc.Transport = bearer{token, http.DefaultTransport}
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.resource, HTTPClient: hc}, nil)
	if err != nil {
		return fmt.Errorf("MCP connect: %v", err)
	}
	defer session.Close()
	list, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("MCP tools/list: %v", err)
	}
	if got := toolNames(list); !slices.Equal(got, append([]string{}, want...)) {
		return fmt.Errorf("MCP tools/list shows %v, want %v", got, want)
	}
	for _, tool := range want {
		args := map[string]any{"id": id}
		if tool == "list_notes" {
			args = map[string]any{}
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "notes_" + tool, Arguments: args})
		wantText := map[string]string{"list_notes": "notes: n1 n2", "read_note": "read " + id, "write_note": "wrote " + id}[tool]
		if err != nil || res.IsError || resultText(res) != wantText {
			return fmt.Errorf("MCP %s: %v %v, want %q", tool, res, err, wantText)
		}
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
