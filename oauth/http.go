package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolc/toolc/internal/caller"
)

// MetadataPath is where RFC 9728 puts a resource's metadata; a resource
// with a path, such as /mcp, also has it at MetadataPath + "/mcp".
const MetadataPath = "/.well-known/oauth-protected-resource"

// MetadataURL is the URL of the resource's Protected Resource Metadata
// (RFC 9728 section 3.1: the well-known path inserted between the host
// and the resource's path), which challenges name as resource_metadata.
func (v *Verifier) MetadataURL() string {
	u, _ := url.Parse(v.cfg.Resource) // checked in New
	u.Path = MetadataPath + strings.TrimRight(u.Path, "/")
	u.RawPath, u.RawQuery = "", ""
	return u.String()
}

// Metadata is the resource's Protected Resource Metadata.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// MetadataHandler serves the Protected Resource Metadata; scopes returns
// scopes_supported at each request, so that it follows a reloaded
// catalog.
func (v *Verifier) MetadataHandler(scopes func() []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Public, and fetched by browser-based clients from other
		// origins (RFC 9728 section 3.1).
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		json.NewEncoder(w).Encode(Metadata{
			Resource:               v.cfg.Resource,
			AuthorizationServers:   []string{v.cfg.Issuer},
			ScopesSupported:        scopes(),
			BearerMethodsSupported: []string{"header"},
		})
	})
}

// WithCaller returns ctx carrying the caller.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return caller.With(ctx, c)
}

// CallerFrom returns the caller that Middleware stored in ctx, or nil.
func CallerFrom(ctx context.Context) *Caller {
	return caller.From(ctx)
}

// Middleware lets a request with a valid access token through, with its
// Caller in the context, and answers any other with 401 and a challenge
// that names the resource metadata (MCP authorization, RFC 6750 section
// 3): without error= when the request had no token, with
// error="invalid_token" when its token was refused.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, raw, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
			v.Unauthorized(w, "", "this server requires an OAuth access token: Authorization: Bearer TOKEN")
			return
		}
		c, err := v.Verify(r.Context(), strings.TrimSpace(raw))
		if err != nil {
			v.Unauthorized(w, "invalid_token", err.Error())
			return
		}
		next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), c)))
	})
}

// Unauthorized writes 401 with the challenge; code is "" or an RFC 6750
// error code.
func (v *Verifier) Unauthorized(w http.ResponseWriter, code, desc string) {
	params := []string{fmt.Sprintf("resource_metadata=%s", quote(v.MetadataURL()))}
	if code != "" {
		params = append(params, "error="+quote(code), "error_description="+quote(desc))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	writeError(w, http.StatusUnauthorized, desc)
}

// InsufficientScope writes 403 with the challenge that tells the client
// which scopes to ask for (step-up authorization, RFC 6750 section 3.1).
// scopes are all the scopes the call needs, not only the missing ones, as
// the MCP spec asks, so that a new token has them all.
func (v *Verifier) InsufficientScope(w http.ResponseWriter, scopes []string, desc string) {
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join([]string{
		"error=" + quote("insufficient_scope"),
		"scope=" + quote(strings.Join(scopes, " ")),
		"resource_metadata=" + quote(v.MetadataURL()),
		"error_description=" + quote(desc),
	}, ", "))
	writeError(w, http.StatusForbidden, desc)
}

// quote makes an RFC 9110 quoted-string. Scopes and URLs hold no " or \
// (scope-token forbids them), but a description might.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", " ", "\n", " ").Replace(s) + `"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
