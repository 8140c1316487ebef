package oauth_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// withoutKid is k, with tokens that name no key.
func withoutKid(k *Key) *Key {
	anon := *k
	anon.kid = ""
	return &anon
}

// TestTokenWithoutKid: a token that names no key (kid) is checked only
// against the keys that fit its alg, and against none when more than four
// do: it used to be tried against every key of the set, which made one
// unauthenticated request cost a signature check per published key
// (0.8 s of CPU with a large set).
func TestTokenWithoutKid(t *testing.T) {
	iss := NewIssuer(t)
	ecs := make([]*Key, 6)
	for i := range ecs {
		ecs[i] = newEC(t, fmt.Sprint("e", i))
	}
	rsaKey := newRSA(t, "r")
	ecStranger := newEC(t, "")

	for _, tt := range []struct {
		name      string
		published []*Key
		signer    *Key
		err       string
	}{
		{"one key fits among many", append([]*Key{rsaKey}, ecs...), withoutKid(rsaKey), ""},
		{"four keys fit", append([]*Key{rsaKey}, ecs[:4]...), withoutKid(ecs[3]), ""},
		{"five keys fit", append([]*Key{rsaKey}, ecs[:5]...), withoutKid(ecs[4]), "a token without kid is checked against at most 4"},
		{"six keys fit", append([]*Key{rsaKey}, ecs...), withoutKid(ecs[0]), "6 keys of the issuer are for its alg ES256"},
		{"no key fits", ecs, withoutKid(rsaKey), "no key of the issuer is for its alg RS256"},
		{"a stranger's key", ecs[:2], ecStranger, "bad signature"},
		// A kid still picks its key out of a set of any size.
		{"kid among many", append([]*Key{rsaKey}, ecs...), ecs[5], ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iss.Publish(tt.published...)
			v := newVerifier(t, iss, time.Hour)
			_, err := v.Verify(context.Background(), iss.Token(t, tt.signer, Claims{Sub: "a"}))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Verify = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}
