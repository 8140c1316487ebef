package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolc/toolc/oauth"
)

// Issuer is a minimal authorization server on 127.0.0.1: RFC 8414
// metadata and a JWKS whose keys the test rotates, and keys to sign
// tokens with. It mints no tokens over HTTP; the tests sign them.
type Issuer struct {
	URL     string
	srv     *httptest.Server
	mu      sync.Mutex
	public  []jose.JSONWebKey
	fetches atomic.Int32
	down    atomic.Bool
	// held, when set, holds each request for the keys until it is
	// closed, after a send on arrived (see Hold).
	held    chan struct{}
	arrived chan struct{}
}

// Hold makes the issuer's key endpoint slow: each request for the keys
// sends on the channel returned, then waits until release is called.
func (iss *Issuer) Hold(t testing.TB) (arrived <-chan struct{}, release func()) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.held, iss.arrived = make(chan struct{}), make(chan struct{}, 16)
	var once sync.Once
	release = func() { once.Do(func() { close(iss.held) }) }
	t.Cleanup(release) // before the server closes, which waits for its requests
	return iss.arrived, release
}

func NewIssuer(t testing.TB) *Issuer {
	iss := &Issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           iss.URL,
			"authorization_endpoint":           iss.URL + "/authorize",
			"token_endpoint":                   iss.URL + "/token",
			"jwks_uri":                         iss.URL + "/jwks",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		if iss.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		iss.mu.Lock()
		held, arrived := iss.held, iss.arrived
		iss.mu.Unlock()
		if held != nil {
			arrived <- struct{}{}
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		iss.mu.Lock()
		defer iss.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: iss.public})
	})
	iss.srv = httptest.NewServer(mux)
	iss.URL = iss.srv.URL
	t.Cleanup(iss.srv.Close)
	return iss
}

// Key is a signing key and the JWK the issuer publishes for it.
type Key struct {
	priv any
	alg  jose.SignatureAlgorithm
	kid  string
	pub  any
}

func newRSA(t testing.TB, kid string) *Key {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{priv: k, alg: jose.RS256, kid: kid, pub: &k.PublicKey}
}

func newEC(t testing.TB, kid string) *Key {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{priv: k, alg: jose.ES256, kid: kid, pub: &k.PublicKey}
}

func (iss *Issuer) Publish(keys ...*Key) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.public = nil
	for _, k := range keys {
		iss.public = append(iss.public, jose.JSONWebKey{Key: k.pub, KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
	}
}

// Claims are a token's claims; Token fills in what is left zero.
type Claims struct {
	Sub, ClientID, Scope, Iss string
	Aud                       []string
	Exp, Nbf                  time.Time
	NoExp                     bool
}

func (iss *Issuer) Token(t testing.TB, k *Key, c Claims) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if k.kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), k.kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, signer, iss.claims(c))
}

func (iss *Issuer) claims(c Claims) map[string]any {
	if c.Iss == "" {
		c.Iss = iss.URL
	}
	if c.Aud == nil {
		c.Aud = []string{resource}
	}
	if c.Exp.IsZero() {
		c.Exp = time.Now().Add(time.Hour)
	}
	m := map[string]any{"iss": c.Iss, "aud": c.Aud, "sub": c.Sub, "client_id": c.ClientID, "scope": c.Scope, "iat": time.Now().Unix()}
	if !c.NoExp {
		m["exp"] = c.Exp.Unix()
	}
	if !c.Nbf.IsZero() {
		m["nbf"] = c.Nbf.Unix()
	}
	return m
}

func sign(t testing.TB, signer jose.Signer, claims any) string {
	t.Helper()
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

const resource = "http://127.0.0.1:8931/mcp"

func newVerifier(t testing.TB, iss *Issuer, minRefresh time.Duration) *oauth.Verifier {
	t.Helper()
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: resource, MinRefresh: minRefresh})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerify(t *testing.T) {
	iss := NewIssuer(t)
	rsaKey, ecKey, stranger := newRSA(t, "r1"), newEC(t, "e1"), newRSA(t, "r1")
	iss.Publish(rsaKey, ecKey)
	v := newVerifier(t, iss, time.Hour)

	// HS256 "signed" with the RSA public key as the HMAC secret: the
	// classic key-confusion attack.
	der, _ := x509.MarshalPKIXPublicKey(rsaKey.pub)
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: der}, (&jose.SignerOptions{}).WithHeader("kid", "r1"))
	// alg none, written out by hand: go-jose will not make one.
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(iss.claims(Claims{Sub: "mallory", Scope: "orders:read"}))
	none := b64([]byte(`{"alg":"none","kid":"r1"}`)) + "." + b64(payload) + "."

	tests := []struct {
		name, token, err string
	}{
		{"RS256", iss.Token(t, rsaKey, Claims{Sub: "alice", ClientID: "app", Scope: "orders:read orders:write"}), ""},
		{"ES256", iss.Token(t, ecKey, Claims{Sub: "bob", Scope: "orders:read"}), ""},
		{"expired", iss.Token(t, rsaKey, Claims{Sub: "alice", Exp: time.Now().Add(-time.Minute)}), "the token expired"},
		{"expired within the leeway", iss.Token(t, rsaKey, Claims{Sub: "alice", Exp: time.Now().Add(-5 * time.Second)}), ""},
		{"not yet valid", iss.Token(t, rsaKey, Claims{Sub: "alice", Nbf: time.Now().Add(time.Minute)}), "not valid yet"},
		{"no exp", iss.Token(t, rsaKey, Claims{Sub: "alice", NoExp: true}), "no exp"},
		{"no sub", iss.Token(t, rsaKey, Claims{ClientID: "app", Scope: "orders:read"}), "no sub"},
		{"wrong audience", iss.Token(t, rsaKey, Claims{Sub: "alice", Aud: []string{"http://127.0.0.1:9999/mcp"}}), "does not include this resource"},
		{"audience among others", iss.Token(t, rsaKey, Claims{Sub: "alice", Aud: []string{"other", resource}}), ""},
		{"wrong issuer", iss.Token(t, rsaKey, Claims{Sub: "alice", Iss: "http://127.0.0.1:1"}), "issued by"},
		{"bad signature", iss.Token(t, stranger, Claims{Sub: "alice"}), "bad signature"},
		{"tampered payload", tamper(iss.Token(t, rsaKey, Claims{Sub: "alice", Scope: "orders:read"})), "bad signature"},
		{"alg none", none, "accepted algorithm"},
		{"HS256 with the public key as secret", sign(t, hs, iss.claims(Claims{Sub: "mallory"})), "accepted algorithm"},
		{"not a JWT", "opaque-token", "not a JWT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := v.Verify(context.Background(), tt.token)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.err != "" && err == nil:
				t.Fatalf("accepted, as %+v; want an error containing %q", c, tt.err)
			case tt.err != "" && !strings.Contains(err.Error(), tt.err):
				t.Fatalf("error %q, want it to contain %q", err, tt.err)
			}
		})
	}
	c, err := v.Verify(context.Background(), tests[0].token)
	if err != nil || c.Subject != "alice" || c.ClientID != "app" || !c.Has("orders:write") || c.Has("orders") {
		t.Errorf("caller %+v, %v", c, err)
	}
	// scope is scope-tokens separated by spaces (RFC 6749, section 3.3),
	// and a scope-token holds no white space at all: a tab, a newline or a
	// no-break space inside one is part of one odd scope, never a second
	// scope that a tool may need.
	for _, scope := range []string{"orders:read\torders:write", "orders:read\norders:write", "orders:read\u00a0orders:write", "orders:read\u2003orders:write"} {
		c, err := v.Verify(context.Background(), iss.Token(t, rsaKey, Claims{Sub: "alice", Scope: scope}))
		if err != nil || c.Has("orders:write") || c.Has("orders:read") {
			t.Errorf("scope %q: caller %+v, %v; want neither orders:read nor orders:write", scope, c, err)
		}
	}
	c, err = v.Verify(context.Background(), iss.Token(t, rsaKey, Claims{Sub: "alice", Scope: " orders:read  orders:write "}))
	if err != nil || !c.Has("orders:read") || !c.Has("orders:write") || len(c.Scopes) != 2 {
		t.Errorf("scope with extra spaces: caller %+v, %v; want orders:read and orders:write", c, err)
	}
}

// tamper changes the payload's scope without re-signing.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	p = []byte(strings.Replace(string(p), "orders:read", "orders:admn", 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(p)
	return strings.Join(parts, ".")
}

// TestRotation: a token signed with a key the server has not seen makes it
// refetch the keys, at once for the first one after start, then at most
// once per MinRefresh; through an outage of the issuer the cached keys go
// on verifying.
func TestRotation(t *testing.T) {
	iss := NewIssuer(t)
	old, next, third, forged := newRSA(t, "2026-01"), newEC(t, "2026-02"), newEC(t, "2026-03"), newRSA(t, "made-up")
	iss.Publish(old)
	clk := newClock()
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: resource, MinRefresh: 200 * time.Millisecond, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches at start, want 1", n)
	}
	// A rotation right after the start: its key verifies at once.
	iss.Publish(old, next)
	if _, err := v.Verify(context.Background(), iss.Token(t, next, Claims{Sub: "a"})); err != nil {
		t.Fatalf("the first new kid after start: %v", err)
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
	// Another one within MinRefresh waits for it.
	iss.Publish(old, next, third)
	if _, err := v.Verify(context.Background(), iss.Token(t, third, Claims{Sub: "a"})); err == nil {
		t.Fatal("a second new kid within MinRefresh verified without a refetch")
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2: an unknown kid refetched within MinRefresh", n)
	}
	clk.Add(250 * time.Millisecond)
	// Many callers with the new key at once: one fetch serves them all.
	var wg sync.WaitGroup
	var failed atomic.Int32
	tok := iss.Token(t, third, Claims{Sub: "a"})
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.Verify(context.Background(), tok); err != nil {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 || iss.fetches.Load() != 3 {
		t.Fatalf("%d of 20 refused, %d fetches; want 0 and 3", failed.Load(), iss.fetches.Load())
	}
	// Made-up kids cannot make it hammer the issuer.
	for range 50 {
		v.Verify(context.Background(), iss.Token(t, forged, Claims{Sub: "m"}))
	}
	if n := iss.fetches.Load(); n > 4 {
		t.Fatalf("%d fetches after 50 tokens with a made-up kid, want at most 4", n)
	}
	// Outage: cached keys still verify, and a failed refetch keeps them.
	iss.down.Store(true)
	clk.Add(250 * time.Millisecond)
	v.Verify(context.Background(), iss.Token(t, forged, Claims{Sub: "m"}))
	if _, err := v.Verify(context.Background(), iss.Token(t, old, Claims{Sub: "a"})); err != nil {
		t.Fatalf("cached key refused during an outage: %v", err)
	}
}

// clock is a Config.Now that a test moves on, rather than sleep until
// MinRefresh or MaxAge has passed.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *clock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) Add(d time.Duration) { c.ns.Add(int64(d)) }

func TestNewUnreachable(t *testing.T) {
	iss := NewIssuer(t)
	iss.Publish(newRSA(t, "k"))
	url := iss.URL
	iss.srv.Close()
	_, err := oauth.New(context.Background(), oauth.Config{Issuer: url, Resource: resource})
	if err == nil || !strings.Contains(err.Error(), url) {
		t.Fatalf("New with an unreachable issuer: %v", err)
	}
	for _, bad := range []oauth.Config{{Issuer: "not a url", Resource: resource}, {Issuer: url, Resource: "/mcp"}} {
		if _, err := oauth.New(context.Background(), bad); err == nil {
			t.Errorf("New(%+v) = nil error", bad)
		}
	}
}

func TestMiddleware(t *testing.T) {
	iss := NewIssuer(t)
	k := newRSA(t, "k")
	iss.Publish(k)
	v := newVerifier(t, iss, time.Hour)
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(oauth.CallerFrom(r.Context()).Subject))
	}))
	meta := `resource_metadata="http://127.0.0.1:8931/.well-known/oauth-protected-resource/mcp"`
	for _, tt := range []struct {
		name, auth string
		status     int
		challenge  string
	}{
		{"no token", "", 401, "Bearer " + meta},
		{"basic", "Basic YTpi", 401, "Bearer " + meta},
		{"expired", "Bearer " + iss.Token(t, k, Claims{Sub: "a", Exp: time.Now().Add(-time.Hour)}), 401, "Bearer " + meta + `, error="invalid_token", error_description="invalid token: the token expired"`},
		{"valid", "Bearer " + iss.Token(t, k, Claims{Sub: "alice"}), 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status || w.Header().Get("WWW-Authenticate") != tt.challenge {
				t.Errorf("%d %q, want %d %q", w.Code, w.Header().Get("WWW-Authenticate"), tt.status, tt.challenge)
			}
			if tt.status == 200 && w.Body.String() != "alice" {
				t.Errorf("handler saw caller %q", w.Body.String())
			}
		})
	}
	w := httptest.NewRecorder()
	v.InsufficientScope(w, []string{"orders:read", "orders:write"}, "tool needs orders:write")
	if got := w.Header().Get("WWW-Authenticate"); w.Code != 403 || !strings.HasPrefix(got, `Bearer error="insufficient_scope", scope="orders:read orders:write", `+meta) {
		t.Errorf("insufficient scope: %d %q", w.Code, got)
	}
	w = httptest.NewRecorder()
	v.MetadataHandler(func() []string { return []string{"orders:read"} }).ServeHTTP(w, httptest.NewRequest("GET", oauth.MetadataPath+"/mcp", nil))
	var m oauth.Metadata
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m.Resource != resource || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != iss.URL || len(m.ScopesSupported) != 1 {
		t.Errorf("metadata %s: %v", w.Body, err)
	}
}

// BenchmarkVerify: one token's validation with the keys cached, and the
// first validation of a new Verifier, which discovers the issuer and
// fetches its keys over loopback HTTP first.
func BenchmarkVerify(b *testing.B) {
	iss := NewIssuer(b)
	rk, ek := newRSA(b, "r"), newEC(b, "e")
	iss.Publish(rk, ek)
	for _, k := range []*Key{rk, ek} {
		tok := iss.Token(b, k, Claims{Sub: "alice", Scope: "notes:read"})
		b.Run("token-remembered-"+string(k.alg), func(b *testing.B) {
			v := newVerifier(b, iss, time.Hour)
			for b.Loop() {
				if _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Each call a token not seen before: the signature is checked
		// against the cached keys.
		fresh := make([]string, 300)
		for i := range fresh {
			fresh[i] = iss.Token(b, k, Claims{Sub: fmt.Sprint("user-", i), Scope: "notes:read"})
		}
		b.Run("keys-cached-"+string(k.alg), func(b *testing.B) {
			v := newVerifier(b, iss, time.Hour)
			i := 0
			for b.Loop() {
				if _, err := v.Verify(context.Background(), fresh[i%len(fresh)]); err != nil {
					b.Fatal(err)
				}
				i++
				if i%len(fresh) == 0 {
					v = newVerifier(b, iss, time.Hour) // forget the tokens, not the cost
				}
			}
		})
		b.Run("first-fetch-"+string(k.alg), func(b *testing.B) {
			for b.Loop() {
				v := newVerifier(b, iss, time.Hour)
				if _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestVerifiedCache: a token that verified is remembered only while it is
// unexpired and the keys it was checked against are current.
func TestVerifiedCache(t *testing.T) {
	iss := NewIssuer(t)
	old, next := newRSA(t, "old"), newRSA(t, "next")
	iss.Publish(old)
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: resource, MinRefresh: time.Nanosecond,
		Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	tok := iss.Token(t, old, Claims{Sub: "a", Exp: now.Add(time.Minute)})
	for range 2 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	clock.Store(now.Add(2 * time.Minute).UnixNano())
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("a remembered token verified after it expired")
	}
	clock.Store(now.UnixNano())
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	// The issuer drops the old key; a token with the new kid makes the
	// server refetch, and the remembered token is checked again, and fails.
	iss.Publish(next)
	clock.Store(now.Add(time.Second).UnixNano())
	if _, err := v.Verify(context.Background(), iss.Token(t, next, Claims{Sub: "b"})); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("a remembered token verified after its key was withdrawn")
	}
}

// TestNewBadIssuer: an issuer whose metadata or keys are unusable stops
// New with the reason, never a verifier without keys.
func TestNewBadIssuer(t *testing.T) {
	k := newEC(t, "k")
	jwk, err := json.Marshal(jose.JSONWebKey{Key: k.pub, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, meta, jwks string
		status           int
		want             string
	}{
		{"no jwks_uri", `{"issuer": "ISS"}`, "", 200, "has no jwks_uri"},
		{"keys answer 500", `{"issuer": "ISS", "jwks_uri": "ISS/jwks"}`, "boom", 500, "500 Internal Server Error"},
		{"keys not JSON", `{"issuer": "ISS", "jwks_uri": "ISS/jwks"}`, "<html>", 200, "invalid character"},
		{"only a symmetric key", `{"issuer": "ISS", "jwks_uri": "ISS/jwks"}`, `{"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}]}`, 200, "no public signing key"},
		{"no keys", `{"issuer": "ISS", "jwks_uri": "ISS/jwks"}`, `{"keys": []}`, 200, "no public signing key"},
		{"metadata of another issuer", `{"issuer": "http://127.0.0.1:1", "jwks_uri": "ISS/jwks"}`, `{"keys": []}`, 200, `names the issuer "http://127.0.0.1:1"`},
		{"keys in the clear", `{"issuer": "ISS", "jwks_uri": "http://keys.example.com/jwks"}`, "", 200, "is not an https URL"},
		{"keys not a URL", `{"issuer": "ISS", "jwks_uri": "javascript:alert(1)"}`, "", 200, "is not an https URL"},
		// A server for client credentials, or Microsoft Entra ID, need
		// not advertise PKCE, which a resource server never uses.
		{"no PKCE advertised", `{"issuer": "ISS", "jwks_uri": "ISS/jwks"}`, `{"keys": [KEY]}`, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var url string
			mux := http.NewServeMux()
			mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(strings.ReplaceAll(tt.meta, "ISS", url)))
			})
			mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(strings.ReplaceAll(tt.jwks, "KEY", string(jwk))))
			})
			srv := httptest.NewUnstartedServer(mux)
			url = "http://" + srv.Listener.Addr().String()
			srv.Start()
			defer srv.Close()
			v, err := oauth.New(context.Background(), oauth.Config{Issuer: url, Resource: resource})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || v != nil {
				t.Fatalf("New: %v, %v; want an error containing %q", v, err, tt.want)
			}
		})
	}
}

// TestVerifiedCacheBounded: with more live tokens than the cache holds, a
// token in use stays remembered (the least recently used go), the cache
// stays within its bound, and a remembered token is refused once it has
// expired. The cache used to be emptied whenever it filled, so that every
// token, the busiest too, paid a signature check again each 4096 new ones.
func TestVerifiedCacheBounded(t *testing.T) {
	iss := NewIssuer(t)
	k := newEC(t, "e")
	iss.Publish(k)
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: resource,
		Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(tok string) {
		t.Helper()
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	busy := iss.Token(t, k, Claims{Sub: "busy", Exp: now.Add(time.Hour)})
	short := iss.Token(t, k, Claims{Sub: "short", Exp: now.Add(time.Minute)})
	verify(busy)
	verify(short)
	const live = 5000 // more than the cache holds (4096)
	others := make([]string, live)
	for i := range others {
		others[i] = iss.Token(t, k, Claims{Sub: fmt.Sprint("user-", i), Exp: now.Add(time.Hour)})
	}
	for i, tok := range others {
		verify(tok)
		if i%100 == 0 {
			verify(busy)
			verify(short)
		}
	}
	// Each token was checked once: busy and short never again.
	if got, want := oauth.SignatureChecks(v), int64(live+2); got != want {
		t.Errorf("%d signature checks, want %d: a token in use was forgotten", got, want)
	}
	if n := oauth.Remembered(v); n > 4096 {
		t.Errorf("%d tokens remembered, over the bound of 4096", n)
	}
	// The first of the others went idle long ago: forgotten, checked again.
	verify(others[0])
	if got, want := oauth.SignatureChecks(v), int64(live+3); got != want {
		t.Errorf("%d signature checks, want %d: the least recently used token was kept", got, want)
	}
	// Past short's exp and the leeway, the remembered token is refused,
	// and busy, unexpired, is still served from the cache.
	clock.Store(now.Add(time.Minute + oauth.DefaultLeeway + time.Second).UnixNano())
	if _, err := v.Verify(context.Background(), short); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired remembered token: %v, want refused as expired", err)
	}
	verify(busy)
	if got, want := oauth.SignatureChecks(v), int64(live+4); got != want {
		t.Errorf("%d signature checks, want %d", got, want)
	}
}
