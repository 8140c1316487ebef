package oauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/internal/authserver"
	"github.com/toolc/toolc/oauth"
)

// The tests here take their tokens from a real authorization server,
// zitadel/oidc's provider (internal/authserver), rather than signing them.

func startAS(t *testing.T) *authserver.Server {
	t.Helper()
	as, err := authserver.Start(authserver.Config{
		Resources: []string{resource},
		Clients:   []authserver.Client{{ID: "svc", Secret: "s", Scopes: []string{"notes:use"}, Audience: []string{resource}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Stop)
	return as
}

func asToken(t *testing.T, as *authserver.Server) string {
	t.Helper()
	tok, err := as.ClientCredentials(context.Background(), "svc", "s", []string{"notes:use"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// eventually calls f until it returns nil or 5 seconds pass.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWithdrawnKey: a key the issuer withdraws stops verifying once the
// keys are older than MaxAge, though no token names an unknown kid.
func TestWithdrawnKey(t *testing.T) {
	as := startAS(t)
	ctx := context.Background()
	v, err := oauth.New(ctx, oauth.Config{Issuer: as.Issuer, Resource: resource, MinRefresh: 50 * time.Millisecond, MaxAge: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	old := asToken(t, as)
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := as.Rotate(jose.ES256, false); err != nil {
		t.Fatal(err)
	}
	// Within MaxAge the cached keys still hold the old one.
	if _, err := v.Verify(ctx, old); err != nil {
		t.Fatalf("a token of the cached key within MaxAge: %v", err)
	}
	eventually(t, "the withdrawn key's token still verifies past MaxAge", func() error {
		if _, err := v.Verify(ctx, old); err == nil {
			return errorString("verified")
		}
		return nil
	})
	if _, err := v.Verify(ctx, asToken(t, as)); err != nil {
		t.Errorf("a token of the new key: %v", err)
	}
}

// TestIssuerOutage: with the issuer down, the cached keys verify tokens
// never seen before, past MaxAge, as the failed refetches keep them; once
// it is back, the refetch is retried and picks up its new key.
func TestIssuerOutage(t *testing.T) {
	as := startAS(t)
	ctx := context.Background()
	v, err := oauth.New(ctx, oauth.Config{Issuer: as.Issuer, Resource: resource, MinRefresh: 50 * time.Millisecond, MaxAge: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var unseen []string
	for range 10 {
		unseen = append(unseen, asToken(t, as))
	}
	as.Stop()
	deadline := time.Now().Add(400 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		if _, err := v.Verify(ctx, unseen[i%len(unseen)]); err != nil {
			t.Fatalf("token %d while the issuer is down: %v", i%len(unseen), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The issuer rotates while down and comes back.
	if _, err := as.Rotate(jose.RS256, true); err != nil {
		t.Fatal(err)
	}
	if err := as.Restart(); err != nil {
		t.Fatal(err)
	}
	next := asToken(t, as)
	eventually(t, "the new key after the outage", func() error {
		_, err := v.Verify(ctx, next)
		return err
	})
	for i, tok := range unseen {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Errorf("token %d after the outage, its key still published: %v", i, err)
		}
	}
	if _, err := v.Verify(ctx, "x"+next); err == nil || !strings.Contains(err.Error(), "invalid token") {
		t.Errorf("a mangled token: %v", err)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
