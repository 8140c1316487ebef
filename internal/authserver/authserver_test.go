package authserver_test

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/toolc/toolc/internal/authserver"
	"github.com/toolc/toolc/oauth"
)

const resource = "http://127.0.0.1:8931/mcp"

func start(t *testing.T) *authserver.Server {
	t.Helper()
	as, err := authserver.Start(authserver.Config{
		Resources: []string{resource, "http://127.0.0.1:9999/mcp"},
		Clients: []authserver.Client{
			{ID: "svc", Secret: "svc-secret", Scopes: []string{"notes:use", "notes:read"}, Audience: []string{resource}},
			{ID: "cli", RedirectURIs: []string{"http://127.0.0.1:1/callback"}, Scopes: []string{"notes:use", "notes:read", "notes:write"}},
		},
		Users: []authserver.User{{Name: "alice", Password: "wonderland", Scopes: []string{"notes:use", "notes:write"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Stop)
	return as
}

// TestTokens: the server's tokens, from both grants, verify with toolc's
// verifier and carry the scopes and audience the server granted.
func TestTokens(t *testing.T) {
	as := start(t)
	ctx := context.Background()
	v, err := oauth.New(ctx, oauth.Config{Issuer: as.Issuer, Resource: resource, MinRefresh: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Client credentials: asked for a scope the client may not have.
	tok, err := as.ClientCredentials(ctx, "svc", "svc-secret", []string{"notes:use", "notes:read", "notes:write"}, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "svc" || c.ClientID != "svc" || !slices.Equal(c.Scopes, []string{"notes:use", "notes:read"}) {
		t.Errorf("client credentials caller %+v", c)
	}
	if _, err := as.ClientCredentials(ctx, "svc", "wrong", nil, ""); err == nil {
		t.Error("a wrong secret got a token")
	}
	// The resource parameter sets the audience, and an unknown one is
	// refused.
	other, err := as.ClientCredentials(ctx, "svc", "svc-secret", []string{"notes:use"}, "http://127.0.0.1:9999/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, other); err == nil || !strings.Contains(err.Error(), "does not include this resource") {
		t.Errorf("a token for another resource: %v", err)
	}
	if _, err := as.ClientCredentials(ctx, "svc", "svc-secret", nil, "http://elsewhere/mcp"); err == nil || !strings.Contains(err.Error(), "invalid_target") {
		t.Errorf("an unknown resource: %v", err)
	}

	// Authorization code with PKCE, logging in as alice, who may grant
	// notes:use and notes:write of the three asked for.
	cfg := oauth2.Config{ClientID: "cli", RedirectURL: "http://127.0.0.1:1/callback", Scopes: []string{"notes:use", "notes:read", "notes:write"},
		Endpoint: oauth2.Endpoint{AuthURL: as.Issuer + "/authorize", TokenURL: as.Issuer + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	res := oauth2.SetAuthURLParam("resource", resource)
	code, gotState, _, err := authserver.Login(ctx, cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), res), "alice", "wonderland")
	if err != nil {
		t.Fatal(err)
	}
	if gotState != state {
		t.Fatalf("state %q, want %q", gotState, state)
	}
	if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption("not-the-verifier-"+verifier), res); err == nil {
		t.Error("a code exchanged with the wrong PKCE verifier")
	}
	code, _, _, err = authserver.Login(ctx, cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), res), "alice", "wonderland")
	if err != nil {
		t.Fatal(err)
	}
	ot, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier), res)
	if err != nil {
		t.Fatal(err)
	}
	c, err = v.Verify(ctx, ot.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "alice" || c.ClientID != "cli" || !slices.Equal(c.Scopes, []string{"notes:use", "notes:write"}) {
		t.Errorf("authorization code caller %+v", c)
	}
	if _, _, _, err := authserver.Login(ctx, cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), res), "alice", "guess"); err == nil {
		t.Error("a wrong password logged in")
	}

	// Rotation: the new key's tokens verify once the verifier refetches.
	old := as.KeyID()
	kid, err := as.Rotate(jose.ES256, false)
	if err != nil || kid == old {
		t.Fatalf("rotate: %q %v", kid, err)
	}
	// No wait for MinRefresh: nothing has refetched the keys since New,
	// and the first unknown kid after it refetches at once.
	tok2, err := as.ClientCredentials(ctx, "svc", "svc-secret", []string{"notes:use"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, tok2); err != nil {
		t.Errorf("a token of the rotated key: %v", err)
	}
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Error("a token of the withdrawn key still verified")
	}
}
