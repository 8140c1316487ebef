package plugins

import (
	"context"
	"slices"
)

// Caller is who a call is made for, as the host authenticated them: with
// toolc serve --auth-issuer, the subject, client and scopes of the
// caller's OAuth access token. It is what a handler needs to act for the
// caller (whose notes, which tenant) and to decide finer than the
// contract's scopes can; the token itself never reaches the handler, so a
// handler cannot replay it against other services.
type Caller struct {
	// Subject is the token's sub: the user, or the client itself in the
	// client credentials flow. It is unique only within the issuer.
	Subject string
	// ClientID is the OAuth client the token was issued to (client_id,
	// or azp); "" when the token names none.
	ClientID string
	// Scopes are the scopes the token grants, in the token's order. They
	// include every scope the tool needs (the host checked them before
	// the call), and may hold more.
	Scopes []string
}

// Has reports whether the caller's token grants scope.
func (c Caller) Has(scope string) bool { return slices.Contains(c.Scopes, scope) }

type callerKey struct{}

// WithCaller returns ctx carrying c as the call's caller, for CallerOf.
// The host sets it: toolc's runtime for each call of an OAuth caller, in
// process (runtime.Local) and, through the plugin protocol, in a plugin.
// An embedder that authenticates callers its own way sets it on the
// context it passes to runtime.Runtime.Call.
func WithCaller(ctx context.Context, c Caller) context.Context {
	c.Scopes = slices.Clone(c.Scopes)
	return context.WithValue(ctx, callerKey{}, &c)
}

// CallerOf returns the caller of the running call, and whether there is
// one. There is none when the server authenticates no one (no auth, or a
// shared --token, which says that the client knows the token, not who it
// is), over stdio, and under a host of plugin protocol 3 or older. A
// handler that must know who calls treats no caller as anonymous and
// refuses what an anonymous caller may not do.
func CallerOf(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	if !ok || c == nil {
		return Caller{}, false
	}
	// A copy: a handler that changes its Scopes changes nothing that the
	// host or another handler reads.
	out := *c
	out.Scopes = slices.Clone(out.Scopes)
	return out, true
}
