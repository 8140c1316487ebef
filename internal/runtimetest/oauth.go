package runtimetest

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
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// TestResource is the OAuth resource of the test servers.
const TestResource = "https://tools.example/mcp"

// Issuer is an authorization server's metadata and JWKS on 127.0.0.1,
// with an RSA and an EC key; the tests sign the tokens.
type Issuer struct {
	URL     string
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	Signers map[jose.SignatureAlgorithm]jose.Signer
}

// NewIssuer starts an Issuer for the test's duration.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{Signers: map[jose.SignatureAlgorithm]jose.Signer{}}
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
	iss.URL = srv.URL
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.URL, "authorization_endpoint": iss.URL + "/authorize", "token_endpoint": iss.URL + "/token",
			"jwks_uri": iss.URL + "/keys", "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
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
		iss.Signers[alg] = s
	}
	return iss
}

// Token signs an access Token for testResource, alternating keys.
func (iss *Issuer) Token(t testing.TB, alg jose.SignatureAlgorithm, sub, scope string) string {
	t.Helper()
	raw, err := jwt.Signed(iss.Signers[alg]).Claims(map[string]any{
		"iss": iss.URL, "aud": TestResource, "sub": sub, "client_id": "test-client", "scope": scope,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TokenFor signs an RS256 access token for testResource for sub through
// the OAuth client client.
func (iss *Issuer) TokenFor(t testing.TB, sub, client string) string {
	t.Helper()
	raw, err := jwt.Signed(iss.Signers[jose.RS256]).Claims(map[string]any{
		"iss": iss.URL, "aud": TestResource, "sub": sub, "client_id": client,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// GuardedServer serves the guarded contract with OAuth, in process, and
// returns its URL, the issuer and the audit log. Each handler answers its
// name and the id, and a second block with the caller it was given
// (plugins.CallerOf), if any.
func GuardedServer(t testing.TB, opts ...runtime.Options) (string, *Issuer, *testsync.Buffer) {
	t.Helper()
	rt, audit := GuardedRuntime(t, opts...)
	iss := NewIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: TestResource})
	if err != nil {
		t.Fatal(err)
	}
	return ServeHTTP(t, rt, httpapi.Options{OAuth: v}).URL, iss, audit
}

// GuardedRuntime is GuardedServer's runtime, and its audit log.
func GuardedRuntime(t testing.TB, opts ...runtime.Options) (*runtime.Runtime, *testsync.Buffer) {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{Dir: Root()}, "./runtime/testdata/guarded")
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

// MCPSession connects a go-sdk client to url's /mcp with the access token.
func MCPSession(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: BearerTransport{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
