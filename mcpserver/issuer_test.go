package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolc/toolc/oauth"
)

// testResource is the resource of the tests' OAuth servers.
const testResource = "https://tools.example/mcp"

// testIssuer is an OAuth issuer for the tests: its metadata and one RSA
// key, served over HTTP on loopback, and tokens signed with the key.
type testIssuer struct {
	url    string
	signer jose.Signer
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &testIssuer{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.url, "authorization_endpoint": iss.url + "/authorize", "token_endpoint": iss.url + "/token",
			"jwks_uri": iss.url + "/keys", "response_types_supported": []string{"code"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "rsa", Algorithm: "RS256", Use: "sig"}}})
	})
	if iss.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "rsa")); err != nil {
		t.Fatal(err)
	}
	return iss
}

// verifier returns an oauth.Verifier of the issuer for testResource.
func (iss *testIssuer) verifier(t testing.TB) *oauth.Verifier {
	t.Helper()
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.url, Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// token signs an access token of sub with the scopes (space-separated).
func (iss *testIssuer) token(t testing.TB, sub, scope string) string {
	t.Helper()
	raw, err := jwt.Signed(iss.signer).Claims(map[string]any{
		"iss": iss.url, "aud": testResource, "sub": sub, "client_id": "test-client", "scope": scope,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
