// Package caller carries the caller that an OAuth access token speaks for
// on a context. It is package oauth's Caller (oauth.Caller is this type,
// and oauth.WithCaller and CallerFrom are With and From), apart from the
// token verification, so that the runtime can hold each call to its
// caller's scopes without linking go-jose.
package caller

import (
	"context"
	"slices"
	"time"
)

// Caller is who a valid access token speaks for.
type Caller struct {
	// Subject is the token's sub: the user, or the client itself in the
	// client credentials flow.
	Subject string
	// ClientID is the OAuth client the token was issued to (client_id,
	// or azp).
	ClientID string
	// Scopes are the token's scopes.
	Scopes []string
	// Expiry is the token's exp.
	Expiry time.Time
}

// Has reports whether the caller's token grants scope.
func (c *Caller) Has(scope string) bool {
	return c != nil && slices.Contains(c.Scopes, scope)
}

// Missing returns the scopes of need that the caller's token lacks.
func (c *Caller) Missing(need []string) []string {
	var out []string
	for _, s := range need {
		if !c.Has(s) {
			out = append(out, s)
		}
	}
	return out
}

type key struct{}

// With returns ctx carrying the caller.
func With(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From returns the caller that With stored in ctx, or nil.
func From(ctx context.Context) *Caller {
	c, _ := ctx.Value(key{}).(*Caller)
	return c
}
