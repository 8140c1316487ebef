// Package authserver runs a real OAuth 2.1 authorization server in memory,
// for the tests that check toolc as a resource server against tokens it
// did not mint: zitadel/oidc's OpenID Provider (github.com/zitadel/oidc/v3
// pkg/op), the library that ZITADEL itself and other identity servers are
// built on, with a small storage of its own here. The provider does the
// protocol (discovery, the JWKS, client authentication, the authorization
// code flow with PKCE, client credentials, JWT access tokens); the storage
// decides who gets which scopes and which audience, as any deployment's
// does.
//
// The storage binds tokens to a resource as RFC 8707 asks: a `resource`
// parameter of the authorization or token request becomes the token's aud
// (and must be one of Config.Resources); without one, a client's token has
// the client's configured audience, as a client credentials client that
// sends no resource gets from most servers.
//
// It is not a stand-in: it listens on 127.0.0.1, and every token a test
// uses comes from its HTTP endpoints.
package authserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is an OAuth client that the server knows.
type Client struct {
	ID string
	// Secret is a confidential client's secret, for client credentials;
	// "" is a public client, which uses the authorization code flow with
	// PKCE.
	Secret string
	// RedirectURIs are a public client's redirect URIs.
	RedirectURIs []string
	// Scopes are the scopes this client may be granted; a request for
	// others gets only these.
	Scopes []string
	// Audience is the aud of a token whose request names no resource.
	Audience []string
	// Lifetime is how long its access tokens last; 0 means an hour. A
	// negative lifetime issues tokens that have already expired, as a
	// server whose clock runs behind does.
	Lifetime time.Duration
}

// User is a user who can log in during the authorization code flow.
type User struct {
	Name, Password string
	// Scopes are the scopes this user may grant; a token from the
	// authorization code flow holds those the client asked for, the
	// client may have and the user may grant.
	Scopes []string
}

// Config configures a Server.
type Config struct {
	Clients []Client
	Users   []User
	// Resources are the resource indicators (RFC 8707) the server issues
	// tokens for.
	Resources []string
	// Alg is the algorithm of the first signing key: RS256 (the zero
	// value) or ES256.
	Alg jose.SignatureAlgorithm
}

// Server is a running authorization server.
type Server struct {
	// Issuer is the server's issuer identifier, http://127.0.0.1:PORT.
	Issuer string

	addr    string
	handler http.Handler
	st      *storage

	mu  sync.Mutex
	srv *http.Server
}

// Start starts a server on 127.0.0.1.
func Start(cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{addr: ln.Addr().String()}
	s.Issuer = "http://" + s.addr
	s.st = &storage{cfg: cfg, requests: map[string]*authRequest{}, codes: map[string]string{}}
	if _, err := s.st.rotate(cmpOr(cfg.Alg, jose.RS256), false); err != nil {
		ln.Close()
		return nil, err
	}
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:      sha256.Sum256([]byte(rand.Text())),
		CodeMethodS256: true,
		AuthMethodPost: true,
	}, s.st, op.StaticIssuer(s.Issuer), op.WithAllowInsecure())
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.st.loginDone = op.AuthCallbackURL(provider)
	mux := http.NewServeMux()
	mux.Handle("/login", op.NewIssuerInterceptor(provider.IssuerFromRequest).Handler(http.HandlerFunc(s.st.login)))
	mux.Handle("/", s.st.resourceParam(provider))
	s.handler = mux
	s.serve(ln)
	return s, nil
}

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

// Stop stops the server: its address refuses connections until Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Restart serves again on the same address, with the same keys, clients
// and users.
func (s *Server) Restart() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	s.serve(ln)
	return nil
}

// Rotate makes a new signing key with alg and signs every later token with
// it; the JWKS publishes it, and the old keys too when keepOld is set (a
// graceful rotation) or only it when not (the old keys withdrawn). It
// returns the new key's kid.
func (s *Server) Rotate(alg jose.SignatureAlgorithm, keepOld bool) (string, error) {
	return s.st.rotate(alg, keepOld)
}

// KeyID returns the kid of the current signing key.
func (s *Server) KeyID() string {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.signing.id
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// --- storage

type key struct {
	id  string
	alg jose.SignatureAlgorithm
	key any // private
	pub any
}

func (k *key) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *key) Algorithm() jose.SignatureAlgorithm          { return k.alg }
func (k *key) ID() string                                  { return k.id }
func (k *key) Use() string                                 { return "sig" }

// signingKey and publicKey tell op.SigningKey's Key (the private key) from
// op.Key's (the public one).
type signingKey struct{ *key }

func (k signingKey) Key() any { return k.key.key }

type publicKey struct{ *key }

func (k publicKey) Key() any { return k.pub }

type storage struct {
	cfg       Config
	loginDone func(context.Context, string) string

	mu        sync.Mutex
	signing   *key
	published []*key
	serial    int
	requests  map[string]*authRequest
	codes     map[string]string // code -> request id
}

func (st *storage) rotate(alg jose.SignatureAlgorithm, keepOld bool) (string, error) {
	k := &key{alg: alg}
	switch alg {
	case jose.RS256:
		priv, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", err
		}
		k.key, k.pub = priv, &priv.PublicKey
	case jose.ES256:
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", err
		}
		k.key, k.pub = priv, &priv.PublicKey
	default:
		return "", fmt.Errorf("authserver: no keys for %s", alg)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.serial++
	k.id = fmt.Sprintf("key-%d-%s", st.serial, alg)
	st.signing = k
	if !keepOld {
		st.published = nil
	}
	st.published = append(st.published, k)
	return k.id, nil
}

func (st *storage) client(id string) (*Client, bool) {
	for i := range st.cfg.Clients {
		if st.cfg.Clients[i].ID == id {
			return &st.cfg.Clients[i], true
		}
	}
	return nil, false
}

type resourceKey struct{}

// resourceParam reads the RFC 8707 resource parameters of an authorization
// or token request into the context, where the storage finds them, and
// refuses one the server does not serve with invalid_target.
func (st *storage) resourceParam(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res := r.Form["resource"]
		for _, x := range res {
			if !slices.Contains(st.cfg.Resources, x) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":"invalid_target","error_description":%q}`, "this server issues no tokens for "+x)
				return
			}
		}
		if len(res) > 0 {
			r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, res))
		}
		next.ServeHTTP(w, r)
	})
}

func audience(ctx context.Context, c *Client) []string {
	if res, ok := ctx.Value(resourceKey{}).([]string); ok {
		return res
	}
	return c.Audience
}

// grant keeps the scopes of want that every list of allowed holds.
func grant(want []string, allowed ...[]string) []string {
	var out []string
	for _, s := range want {
		ok := true
		for _, a := range allowed {
			ok = ok && slices.Contains(a, s)
		}
		if ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// login is the login page: GET shows a form, POST checks the user and
// hands the request back to the provider. A test posts the form as a
// browser would.
func (st *storage) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := r.Form.Get("id")
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<form method="post" action="/login"><input type="hidden" name="id" value="%s">`+
			`<input name="username"><input name="password" type="password"><button>Log in</button></form>`, html.EscapeString(id))
		return
	}
	st.mu.Lock()
	req, ok := st.requests[id]
	var user *User
	for i := range st.cfg.Users {
		if u := &st.cfg.Users[i]; u.Name == r.Form.Get("username") && u.Password == r.Form.Get("password") {
			user = u
		}
	}
	if ok && user != nil {
		req.subject, req.done, req.authTime = user.Name, true, time.Now()
		req.scopes = grant(req.scopes, user.Scopes)
	}
	st.mu.Unlock()
	switch {
	case !ok:
		http.Error(w, "no such authorization request", http.StatusBadRequest)
	case user == nil:
		http.Error(w, "wrong user name or password", http.StatusUnauthorized)
	default:
		http.Redirect(w, r, st.loginDone(r.Context(), id), http.StatusFound)
	}
}

// authRequest is one authorization request, from /authorize to the code's
// exchange.
type authRequest struct {
	id, clientID, redirectURI, state, nonce string
	scopes, audience                        []string
	challenge                               *oidc.CodeChallenge
	responseType                            oidc.ResponseType
	responseMode                            oidc.ResponseMode
	subject                                 string
	done                                    bool
	authTime                                time.Time
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return a.audience }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.done }

// tokenRequest is a client credentials request.
type tokenRequest struct {
	subject          string
	audience, scopes []string
}

func (t *tokenRequest) GetSubject() string    { return t.subject }
func (t *tokenRequest) GetAudience() []string { return t.audience }
func (t *tokenRequest) GetScopes() []string   { return t.scopes }

var errNotFound = errors.New("not found")

func (st *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	c, ok := st.client(req.ClientID)
	if !ok {
		return nil, errNotFound
	}
	a := &authRequest{
		id: rand.Text(), clientID: req.ClientID, redirectURI: req.RedirectURI, state: req.State, nonce: req.Nonce,
		scopes: grant(req.Scopes, c.Scopes), audience: audience(ctx, c),
		responseType: req.ResponseType, responseMode: req.ResponseMode,
	}
	if req.CodeChallenge != "" {
		a.challenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}
	}
	st.mu.Lock()
	st.requests[a.id] = a
	st.mu.Unlock()
	return a, nil
}

func (st *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if a, ok := st.requests[id]; ok {
		return a, nil
	}
	return nil, errNotFound
}

func (st *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if a, ok := st.requests[st.codes[code]]; ok {
		return a, nil
	}
	return nil, errNotFound
}

func (st *storage) SaveAuthCode(_ context.Context, id, code string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.codes[code] = id
	return nil
}

func (st *storage) DeleteAuthRequest(_ context.Context, id string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.requests, id)
	for code, rid := range st.codes {
		if rid == id {
			delete(st.codes, code)
		}
	}
	return nil
}

func (st *storage) lifetime(clientID string) time.Duration {
	if c, ok := st.client(clientID); ok && c.Lifetime != 0 {
		return c.Lifetime
	}
	return time.Hour
}

func (st *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	clientID := req.GetSubject()
	if a, ok := req.(*authRequest); ok {
		clientID = a.clientID
	}
	return rand.Text(), time.Now().Add(st.lifetime(clientID)), nil
}

func (st *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("authserver: no refresh tokens")
}

func (st *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (st *storage) TerminateSession(context.Context, string, string) error { return nil }

func (st *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrUnsupportedGrantType()
}

func (st *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (st *storage) SigningKey(context.Context) (op.SigningKey, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return signingKey{st.signing}, nil
}

func (st *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256, jose.ES256}, nil
}

func (st *storage) KeySet(context.Context) ([]op.Key, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []op.Key
	for _, k := range st.published {
		out = append(out, publicKey{k})
	}
	return out, nil
}

func (st *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := st.client(id)
	if !ok {
		return nil, errNotFound
	}
	return &opClient{c}, nil
}

func (st *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if c, ok := st.client(id); ok && c.Secret != "" && c.Secret == secret {
		return nil
	}
	return errors.New("wrong client id or secret")
}

func (st *storage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := st.AuthorizeClientIDSecret(ctx, id, secret); err != nil {
		return nil, err
	}
	return st.GetClientByClientID(ctx, id)
}

func (st *storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c, ok := st.client(id)
	if !ok {
		return nil, errNotFound
	}
	return &tokenRequest{subject: id, audience: audience(ctx, c), scopes: grant(scopes, c.Scopes)}, nil
}

// GetPrivateClaimsFromRequest puts the granted scopes in the access
// token's scope claim (RFC 9068 section 2.2.3): the provider leaves that
// to the storage.
func (st *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	return map[string]any{"scope": strings.Join(req.GetScopes(), " ")}, nil
}

func (st *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (st *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	info.Subject = req.GetSubject()
	return nil
}

func (st *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	info.Subject = subject
	return nil
}

func (st *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("authserver: no introspection")
}

func (st *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (st *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

func (st *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("authserver: no JWT profile grant")
}

func (st *storage) Health(context.Context) error { return nil }

// opClient is a Client as the provider sees it.
type opClient struct{ c *Client }

func (o *opClient) GetID() string                    { return o.c.ID }
func (o *opClient) RedirectURIs() []string           { return o.c.RedirectURIs }
func (o *opClient) PostLogoutRedirectURIs() []string { return nil }
func (o *opClient) ApplicationType() op.ApplicationType {
	if o.c.Secret == "" {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}
func (o *opClient) AuthMethod() oidc.AuthMethod {
	if o.c.Secret == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}
func (o *opClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (o *opClient) GrantTypes() []oidc.GrantType {
	if o.c.Secret == "" {
		return []oidc.GrantType{oidc.GrantTypeCode}
	}
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (o *opClient) LoginURL(id string) string            { return "/login?id=" + url.QueryEscape(id) }
func (o *opClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (o *opClient) IDTokenLifetime() time.Duration       { return time.Hour }
func (o *opClient) DevMode() bool                        { return false }
func (o *opClient) IsScopeAllowed(s string) bool         { return slices.Contains(o.c.Scopes, s) }
func (o *opClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (o *opClient) ClockSkew() time.Duration             { return 0 }
func (o *opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (o *opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
