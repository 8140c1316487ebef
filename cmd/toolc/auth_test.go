package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// TestServeAuthFlags: the OAuth flags' usage errors exit 2 with a message
// that says what to do, before anything is compiled or built, and an
// issuer that cannot be reached at start is one of them.
func TestServeAuthFlags(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	noMeta := httptest.NewServer(http.NotFoundHandler())
	defer noMeta.Close()
	t.Setenv("TOOLC_TOKEN", "")
	for _, cmd := range []string{"serve", "dev"} {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--auth-issuer", gone.URL}, "--auth-issuer and --auth-resource go together"},
			{[]string{"--auth-resource", "http://127.0.0.1:8931/mcp"}, "--auth-issuer and --auth-resource go together"},
			{[]string{"--auth-issuer", gone.URL, "--auth-resource", "http://127.0.0.1:8931/mcp", "--token", "t"}, "--auth-issuer and --token (or $TOOLC_TOKEN) are two ways to guard the server; give one of them"},
			{[]string{"--auth-issuer", gone.URL, "--auth-resource", "http://127.0.0.1:8931/mcp", "--stdio"}, "with --stdio"},
			{[]string{"--audit-args"}, "--audit-args adds the arguments to the audit lines of OAuth callers; it needs --auth-issuer"},
			{[]string{"--auth-issuer", gone.URL, "--auth-resource", "http://127.0.0.1:8931/mcp"}, "connection refused"},
			{[]string{"--auth-issuer", noMeta.URL, "--auth-resource", "http://127.0.0.1:8931/mcp"}, "publishes no metadata at /.well-known/oauth-authorization-server or /.well-known/openid-configuration"},
			{[]string{"--auth-issuer", noMeta.URL, "--auth-resource", "/mcp"}, `resource "/mcp" is not an http or https URL`},
		} {
			args := append([]string{cmd}, append(tt.args, "./examples/weather")...)
			r := toolc(t, "../..", args...)
			if r.status != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("toolc %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(args, " "), r.status, r.stderr, tt.want)
			}
		}
	}
}

// TestServeOAuth: toolc serve with --auth-issuer serves the resource
// metadata, challenges a request without a token, serves one with a token
// the issuer signed, and writes the call's audit line on stderr.
func TestServeOAuth(t *testing.T) {
	t.Setenv("TOOLC_TOKEN", "")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var issuer string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/a", "token_endpoint": issuer + "/t",
			"jwks_uri": issuer + "/jwks", "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k", Algorithm: "ES256", Use: "sig"}}})
	})
	// The issuer is set before the server starts: the handlers read it, and
	// a request that arrives through another process orders nothing for the
	// race detector.
	as := httptest.NewUnstartedServer(mux)
	issuer = "http://" + as.Listener.Addr().String()
	as.Start()
	defer as.Close()
	const resource = "https://tools.example/mcp"

	_, url, all := startServeHTTP(t, "--auth-issuer", issuer, "--auth-resource", resource, faultyPattern)

	get := func(path, token string, body string) (int, string, http.Header) {
		method := "GET"
		if body != "" {
			method = "POST"
		}
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), resp.Header
	}
	if code, body, _ := get("/.well-known/oauth-protected-resource/mcp", "", ""); code != 200 || !strings.Contains(body, `"resource":"`+resource+`"`) || !strings.Contains(body, issuer) {
		t.Errorf("metadata: %d %s", code, body)
	}
	if code, _, h := get("/v1/tools", "", ""); code != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `resource_metadata="https://tools.example/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("/v1/tools without a token: %d %q", code, h.Get("WWW-Authenticate"))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k"))
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.Signed(signer).Claims(map[string]any{"iss": issuer, "aud": resource, "sub": "alice", "client_id": "cli",
		"exp": time.Now().Add(time.Hour).Unix()}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if code, body, _ := get("/v1/call", token, `{"name": "echo", "arguments": {"text": "hi"}}`); code != 200 || !strings.Contains(body, "hi") {
		t.Errorf("/v1/call with a token: %d %s", code, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(all.String(), "audit=true subject=alice client=cli tool=echo outcome=ok") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(all.String(), "audit=true subject=alice client=cli tool=echo outcome=ok") || strings.Contains(all.String(), `"hi"`) {
		t.Errorf("stderr has no audit line for the call, or has its arguments:\n%s", all.String())
	}
}
