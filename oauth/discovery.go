package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// serverMetadata is what a resource server needs of the authorization
// server's metadata (RFC 8414, OpenID Connect Discovery).
type serverMetadata struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// metadataURLs are where the metadata of issuer may be, in the order the
// MCP authorization spec gives (RFC 8414 section 3.1, and OpenID Connect
// Discovery with the path inserted and appended).
func metadataURLs(issuer *url.URL) []string {
	u := *issuer
	path := strings.Trim(u.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	at := func(p string) string { u.Path = p; return u.String() }
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server/" + path),
		at("/.well-known/openid-configuration/" + path),
		at("/" + path + "/.well-known/openid-configuration"),
	}
}

// discover finds the issuer's metadata. It is the resource server's
// share of the discovery that go-sdk's client does (auth.
// GetAuthServerMetadata), without the client's checks: go-sdk refuses a
// server that advertises no PKCE method, which a resource server never
// uses and which some servers (Microsoft Entra ID) do not advertise. It
// keeps the checks that protect the keys: the metadata names this issuer,
// and the keys come over HTTPS (or from a loopback address).
func discover(ctx context.Context, client *http.Client, issuer string) (*serverMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	if !secure(iu) {
		return nil, fmt.Errorf("an issuer that is not https must be on a loopback address, as its keys would come in the clear")
	}
	for _, mu := range metadataURLs(iu) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mu, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %v", mu, err)
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			continue // not there: try the next place
		case resp.StatusCode != http.StatusOK:
			return nil, fmt.Errorf("%s: %s", mu, resp.Status)
		}
		var m serverMetadata
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", mu, err)
		}
		if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("%s names the issuer %q, not %q", mu, m.Issuer, issuer)
		}
		if m.JWKSURI != "" {
			if ju, err := url.Parse(m.JWKSURI); err != nil || !secure(ju) {
				return nil, fmt.Errorf("its jwks_uri %q is not an https URL (or http on a loopback address)", m.JWKSURI)
			}
		}
		return &m, nil
	}
	return nil, nil
}

// secure reports whether the metadata or the keys may be fetched from u:
// over https, or over http from a loopback address, where nobody else
// can read or change them on the way.
func secure(u *url.URL) bool {
	return u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname()))
}

// checkRedirects returns a copy of client that follows a redirect only to
// a URL that secure allows: a jwks_uri, or a metadata URL, that redirects
// to plain http elsewhere would otherwise hand the keys to whoever is on
// the way. It then applies client's own redirect policy, or net/http's
// default one (at most 10 redirects).
func checkRedirects(client *http.Client) *http.Client {
	c := *client
	policy := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !secure(req.URL) {
			return fmt.Errorf("redirected to %s, which is not https (or http on a loopback address)", req.URL.Redacted())
		}
		if policy != nil {
			return policy(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
