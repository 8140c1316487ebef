// Package oauth makes toolc an OAuth 2.1 resource server, as the MCP
// authorization spec (2026-07-28) asks of an HTTP server that guards its
// tools: it discovers the authorization server's metadata (RFC 8414, or
// OpenID Connect discovery), keeps the keys of its jwks_uri, validates JWT
// access tokens (RFC 9068) against them with the audience bound to this
// resource (RFC 8707), and publishes the resource's own metadata (RFC
// 9728) and the challenges that point clients at it.
//
// JOSE is go-jose (github.com/go-jose/go-jose/v4): maintained, audited,
// and what Go's OIDC stacks (coreos/go-oidc, zitadel/oidc, Hydra) verify
// tokens with, so that no signature code is written here. Discovery
// follows the places go-sdk's client looks (discovery.go), without the
// checks that only a client needs.
package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/toolc/toolc/internal/caller"
)

// Config configures a Verifier.
type Config struct {
	// Issuer is the authorization server's issuer identifier, such as
	// https://auth.example.com. Tokens must carry it as iss.
	Issuer string
	// Resource is this server's resource identifier, the URL clients
	// connect to, such as https://tools.example.com/mcp. Tokens must
	// name it in aud.
	Resource string
	// HTTPClient fetches the metadata and the keys; nil means a client
	// with a 10-second timeout. The Verifier uses a copy whose redirects
	// are held to the rule for the URLs themselves: every hop must be
	// https, or http on a loopback address.
	HTTPClient *http.Client
	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means
	// DefaultLeeway.
	Leeway time.Duration
	// MinRefresh is the least time between two fetches of the keys: a
	// token with an unknown kid refetches them at most that often, so
	// that tokens with made-up kids cannot make the server hammer the
	// authorization server. 0 means DefaultMinRefresh. The first unknown
	// kid after New fetches at once: the keys fetched at start may be
	// older than a rotation just made.
	MinRefresh time.Duration
	// MaxAge is how long fetched keys are used before the next call
	// fetches them again, in the background while the old ones go on
	// verifying, so that a key the issuer withdrew stops verifying
	// within MaxAge even if no token ever names an unknown kid. A failed
	// fetch keeps the old keys and is retried after MinRefresh. 0 means
	// DefaultMaxAge.
	MaxAge time.Duration
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

const (
	// DefaultLeeway is the clock skew allowed on a token's times.
	DefaultLeeway = 30 * time.Second
	// DefaultMinRefresh is the least time between two fetches of the
	// keys.
	DefaultMinRefresh = 30 * time.Second
	// DefaultMaxAge is how long fetched keys are used before they are
	// fetched again.
	DefaultMaxAge = 15 * time.Minute
)

// algorithms are the signature algorithms accepted. "none" and the HMAC
// algorithms are not among them: an HMAC token "signed" with the public
// key as its secret would otherwise pass.
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// Caller is who a valid access token speaks for: its Subject, ClientID,
// Scopes and Expiry. It is defined apart from the verification (in
// internal/caller), so that the runtime, which reads it, links no JOSE.
type Caller = caller.Caller

// Verifier validates access tokens for one resource.
type Verifier struct {
	cfg     Config
	client  *http.Client // cfg.HTTPClient, its redirects checked
	jwksURI string

	keys atomic.Pointer[jose.JSONWebKeySet]
	// fetches runs one fetch of the keys at a time, which every caller
	// that wants the keys refetched meanwhile joins. Each caller waits
	// for it on its own context and may leave: the fetch runs on a
	// context of its own, and goes on for the others. fetched is when
	// the last fetch that is over started, in Unix nanoseconds (0: the
	// start's fetch, which does not count against MinRefresh).
	fetches singleflight.Group
	fetched atomic.Int64
	// loaded is when the current keys were fetched, in Unix nanoseconds;
	// refreshing is set while a background fetch of stale keys runs.
	loaded     atomic.Int64
	refreshing atomic.Bool

	// verified remembers the callers of tokens that verified, by the
	// token's sha256, so that a client's next call with the same token
	// costs a hash and a lookup rather than a signature check. An entry
	// holds only while its token is unexpired and the keys it was checked
	// against are the current ones. It is a least-recently-used cache of
	// maxVerified entries, which bounds its memory: with more live tokens
	// than that, the tokens in use stay and the idle ones go, where a map
	// emptied when full made every token pay the check again each time
	// it filled.
	verified *lru.Cache[[sha256.Size]byte, verifiedToken]
	// checks counts the signature checks, for the tests of the cache.
	checks atomic.Int64
}

type verifiedToken struct {
	caller *Caller
	keys   *jose.JSONWebKeySet
}

// maxVerified bounds the remembered tokens: a few hundred bytes each, so
// about a megabyte for a server with that many clients at once.
const maxVerified = 4096

// InvalidTokenError says why a token was refused. Its text goes to the
// client as error_description.
type InvalidTokenError struct{ Reason string }

func (e *InvalidTokenError) Error() string { return "invalid token: " + e.Reason }

// New discovers the issuer's metadata and fetches its keys. An issuer that
// cannot be reached, or whose metadata has no jwks_uri, is an error: a
// server that starts without keys could refuse every call.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.MinRefresh == 0 {
		cfg.MinRefresh = DefaultMinRefresh
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if u, err := url.Parse(cfg.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("issuer %q is not an http or https URL", cfg.Issuer)
	}
	if u, err := url.Parse(cfg.Resource); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" {
		return nil, fmt.Errorf("resource %q is not an http or https URL without a fragment (RFC 8707)", cfg.Resource)
	}
	client := checkRedirects(cfg.HTTPClient)
	meta, err := discover(ctx, client, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("issuer %s: %v", cfg.Issuer, err)
	}
	if meta == nil {
		return nil, fmt.Errorf("issuer %s publishes no metadata at /.well-known/oauth-authorization-server or /.well-known/openid-configuration", cfg.Issuer)
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("issuer %s: its metadata has no jwks_uri, so its tokens cannot be verified", cfg.Issuer)
	}
	v := &Verifier{cfg: cfg, client: client, jwksURI: meta.JWKSURI}
	v.verified, _ = lru.New[[sha256.Size]byte, verifiedToken](maxVerified) // errs only for a size <= 0
	// The start's fetch does not count against MinRefresh (fetched stays
	// 0): a key the issuer made just before it may not have been
	// published yet.
	if err := v.fetch(ctx); err != nil {
		return nil, fmt.Errorf("issuer %s: %v", cfg.Issuer, err)
	}
	return v, nil
}

// Issuer returns the issuer that tokens must come from.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// Resource returns the resource identifier that tokens must name.
func (v *Verifier) Resource() string { return v.cfg.Resource }

// fetch replaces the keys with those at jwks_uri. On failure the old keys
// stay: a server keeps serving through an outage of its authorization
// server.
func (v *Verifier) fetch(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.jwksURI, nil)
	if err != nil {
		return fmt.Errorf("jwks_uri %q: %v", v.jwksURI, err)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetching the keys: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching the keys from %s: %s", v.jwksURI, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("the keys at %s: %v", v.jwksURI, err)
	}
	// Only public signing keys: a symmetric key in a JWKS must never
	// verify anything.
	set.Keys = slices.DeleteFunc(set.Keys, func(k jose.JSONWebKey) bool {
		return !k.Valid() || !k.IsPublic() || k.Use == "enc"
	})
	if len(set.Keys) == 0 {
		return fmt.Errorf("the key set at %s has no public signing key", v.jwksURI)
	}
	v.keys.Store(&set)
	v.loaded.Store(v.cfg.Now().UnixNano())
	return nil
}

// fetchTimeout bounds one fetch of the keys, whatever HTTPClient's
// timeout: a shared fetch runs on no caller's context.
const fetchTimeout = 10 * time.Second

// due reports whether MinRefresh has passed since the last fetch that is
// over started.
func (v *Verifier) due() bool {
	return v.cfg.Now().Sub(time.Unix(0, v.fetched.Load())) >= v.cfg.MinRefresh
}

// errTooSoon is a shared fetch's result when the last one started less
// than MinRefresh ago.
var errTooSoon = errors.New("the keys were fetched less than MinRefresh ago")

// shared starts a fetch of the keys, or joins the one running, and
// returns the channel of its result. The fetch runs on its own context,
// so that a caller that stops waiting does not end it for the others.
func (v *Verifier) shared() <-chan singleflight.Result {
	return v.fetches.DoChan("jwks", func() (any, error) {
		// Checked again here, where one fetch runs at a time: a caller
		// that saw the fetch due may join after another has done it.
		if !v.due() {
			return nil, errTooSoon
		}
		// When it started, stored once it is over: while it runs, the
		// fetch is still due to the callers who ask, so that they join it
		// rather than give up on the keys it is about to bring.
		start := v.cfg.Now()
		err := v.fetch(context.Background())
		v.fetched.Store(start.UnixNano())
		return nil, err
	})
}

// refreshStale fetches the keys again, in the background, once they are
// older than MaxAge, at most once per MinRefresh while fetches fail; the
// calls meanwhile verify with the keys there are.
func (v *Verifier) refreshStale(now time.Time) {
	if now.Sub(time.Unix(0, v.loaded.Load())) < v.cfg.MaxAge || !v.due() || !v.refreshing.CompareAndSwap(false, true) {
		return
	}
	res := v.shared()
	go func() {
		defer v.refreshing.Store(false)
		<-res
	}()
}

// refresh refetches the keys for a kid that is not among them, unless
// they were fetched less than MinRefresh ago, and waits for the fetch
// until ctx ends. It reports whether the keys changed since before (by a
// fetch it started or joined, or one that ended before it asked).
func (v *Verifier) refresh(ctx context.Context, before *jose.JSONWebKeySet) bool {
	if v.keys.Load() != before {
		return true // another caller fetched them meanwhile
	}
	if !v.due() {
		return false
	}
	select {
	case <-v.shared():
		return v.keys.Load() != before
	case <-ctx.Done():
		return false
	}
}

// Verify validates an access token and returns its caller, or an
// *InvalidTokenError.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Caller, error) {
	now := v.cfg.Now()
	v.refreshStale(now)
	// Hashed from a copy on the stack: []byte(raw) would allocate, for
	// any token longer than 32 bytes, on every call.
	var buf [1024]byte
	sum := sha256.Sum256(append(buf[:0], raw...))
	if hit, ok := v.verified.Get(sum); ok {
		// Past exp (with the leeway a signature check allows), or checked
		// against keys since replaced: checked again, or refused, below.
		if hit.keys == v.keys.Load() && !now.After(hit.caller.Expiry.Add(v.cfg.Leeway)) {
			return hit.caller, nil
		}
		v.verified.Remove(sum)
	}
	// The entry is tied to the keys before the check: if the check
	// refetched them, the next call checks the token again.
	keys := v.keys.Load()
	c, err := v.verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	v.verified.Add(sum, verifiedToken{c, keys})
	return c, nil
}

func (v *Verifier) verify(ctx context.Context, raw string) (*Caller, error) {
	v.checks.Add(1)
	tok, err := jwt.ParseSigned(raw, algorithms)
	if err != nil {
		return nil, &InvalidTokenError{fmt.Sprintf("not a JWT signed with an accepted algorithm (%v)", err)}
	}
	if len(tok.Headers) != 1 {
		return nil, &InvalidTokenError{"a JWT has exactly one signature"}
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "" && !strings.EqualFold(typ, "at+jwt") && !strings.EqualFold(typ, "application/at+jwt") && !strings.EqualFold(typ, "jwt") {
		// RFC 9068 asks for at+jwt; many servers still send JWT. Any
		// other type (an ID token's, a logout token's) is not an access
		// token.
		return nil, &InvalidTokenError{fmt.Sprintf("typ %q is not an access token's", typ)}
	}
	var claims struct {
		jwt.Claims
		Scope    string   `json:"scope"`
		SCP      []string `json:"scp"`
		ClientID string   `json:"client_id"`
		AZP      string   `json:"azp"`
	}
	keys := v.keys.Load()
	if err := verifyWith(tok, h, keys, &claims); err != nil {
		if !errors.Is(err, errUnknownKey) || !v.refresh(ctx, keys) {
			return nil, &InvalidTokenError{err.Error()}
		}
		if err := verifyWith(tok, h, v.keys.Load(), &claims); err != nil {
			return nil, &InvalidTokenError{err.Error()}
		}
	}
	if claims.Expiry == nil {
		return nil, &InvalidTokenError{"the token has no exp"}
	}
	if claims.Subject == "" {
		// RFC 9068 requires sub, the user or (client credentials) the
		// client. Without it, every such token would be one caller: the
		// audit line names none, and one user could resume the call of
		// another, as a requestState is bound to sub and client.
		return nil, &InvalidTokenError{"the token has no sub (RFC 9068 access tokens name their subject)"}
	}
	err = claims.ValidateWithLeeway(jwt.Expected{
		Issuer:      v.cfg.Issuer,
		AnyAudience: jwt.Audience{v.cfg.Resource},
		Time:        v.cfg.Now(),
	}, v.cfg.Leeway)
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, &InvalidTokenError{fmt.Sprintf("issued by %q, not %q", claims.Issuer, v.cfg.Issuer)}
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, &InvalidTokenError{fmt.Sprintf("audience %q does not include this resource, %q", []string(claims.Audience), v.cfg.Resource)}
	case errors.Is(err, jwt.ErrExpired):
		return nil, &InvalidTokenError{"the token expired"}
	case err != nil:
		return nil, &InvalidTokenError{err.Error()}
	}
	c := &Caller{Subject: claims.Subject, ClientID: cmpOr(claims.ClientID, claims.AZP), Expiry: claims.Expiry.Time()}
	// Spaces alone separate scopes (RFC 6749, section 3.3): strings.Fields
	// would also split at a tab or a no-break space, which a scope-token
	// cannot hold, and so grant a scope the issuer never listed.
	for _, sc := range strings.Split(claims.Scope, " ") {
		if sc != "" {
			c.Scopes = append(c.Scopes, sc)
		}
	}
	if len(c.Scopes) == 0 {
		c.Scopes = claims.SCP
	}
	return c, nil
}

var errUnknownKey = errors.New("signed with a key that the issuer does not publish")

// verifyWith checks the signature with the keys that may have made it,
// and decodes the claims: the keys with the kid the header names, or, for
// a token with no kid, the keys that fit its alg (see candidates).
func verifyWith(tok *jwt.JSONWebToken, h jose.Header, keys *jose.JSONWebKeySet, out any) error {
	candidates, err := candidates(h, keys)
	if err != nil {
		return err
	}
	for _, k := range candidates {
		if err = tok.Claims(k.Key, out); err == nil {
			return nil
		}
	}
	return fmt.Errorf("bad signature: %v", err)
}

// maxCandidates bounds the keys one token is checked against, and so the
// work that a token costs before it is known to be good: a signature
// check is tens of microseconds (RSA-2048) to milliseconds (large RSA
// keys), and a key set of a megabyte holds a thousand keys. An issuer
// that rotates its keys publishes two or three at a time; one that
// publishes more names them, and its tokens carry a kid.
const maxCandidates = 4

// candidates are the keys that may have signed a token: those with the
// kid its header names, or, without a kid, every key; of those, the keys
// that fit the token's alg (the key's own alg, when it names one, and its
// type and curve). More than maxCandidates is an error, not a longer
// search.
func candidates(h jose.Header, keys *jose.JSONWebKeySet) ([]jose.JSONWebKey, error) {
	named := keys.Keys
	if h.KeyID != "" {
		if named = keys.Key(h.KeyID); len(named) == 0 {
			return nil, errUnknownKey
		}
	}
	var fit []jose.JSONWebKey
	var err error
	for _, k := range named {
		switch {
		case k.Algorithm != "" && k.Algorithm != h.Algorithm:
			err = fmt.Errorf("key %q is for %s, the token is signed with %s", k.KeyID, k.Algorithm, h.Algorithm)
		case !fits(k.Key, jose.SignatureAlgorithm(h.Algorithm)):
			err = fmt.Errorf("key %q is not a key for %s, the token's alg", k.KeyID, h.Algorithm)
		default:
			fit = append(fit, k)
		}
	}
	switch {
	case len(fit) == 0 && h.KeyID == "":
		return nil, fmt.Errorf("bad signature: the token names no key (kid), and no key of the issuer is for its alg %s", h.Algorithm)
	case len(fit) == 0:
		return nil, fmt.Errorf("bad signature: %v", err)
	case len(fit) > maxCandidates && h.KeyID == "":
		return nil, fmt.Errorf("the token names no key (kid), and %d keys of the issuer are for its alg %s: a token without kid is checked against at most %d", len(fit), h.Algorithm, maxCandidates)
	case len(fit) > maxCandidates:
		return nil, fmt.Errorf("the issuer publishes %d keys with kid %q for %s: a token is checked against at most %d", len(fit), h.KeyID, h.Algorithm, maxCandidates)
	}
	return fit, nil
}

// fits reports whether key can verify a signature made with alg: the type
// of key, and for ECDSA the curve, that alg names (RFC 7518 section 3.1,
// RFC 8037).
func fits(key any, alg jose.SignatureAlgorithm) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return k.Curve == elliptic.P256()
		case jose.ES384:
			return k.Curve == elliptic.P384()
		case jose.ES512:
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
