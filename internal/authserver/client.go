package authserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ClientCredentials gets an access token from the token endpoint with the
// client credentials grant, for scopes, bound to resource unless it is "".
// It posts the request itself rather than through golang.org/x/oauth2,
// which refuses the answer for a token that has already expired (its
// expires_in, negative, overflows).
func (s *Server) ClientCredentials(ctx context.Context, id, secret string, scopes []string, resource string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {strings.Join(scopes, " ")}}
	if resource != "" {
		form.Set("resource", resource)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", fmt.Errorf("token endpoint: %s: %v", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: %s: %s: %s", resp.Status, body.Error, body.Description)
	}
	return body.AccessToken, nil
}

// Login plays the browser of the authorization code flow: it opens the
// authorization URL, posts the login form as user, and follows the
// redirects back to the client's redirect URI, whose code, state and iss
// parameters it returns.
func Login(ctx context.Context, authURL, user, password string) (code, state, iss string, err error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next, err := url.Parse(authURL)
	if err != nil {
		return "", "", "", err
	}
	form := url.Values(nil)
	for range 5 {
		var req *http.Request
		if form != nil {
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, next.String(), strings.NewReader(form.Encode()))
			if err == nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
		} else {
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, next.String(), nil)
		}
		if err != nil {
			return "", "", "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", "", "", err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		form = nil
		switch {
		case resp.StatusCode == http.StatusOK && next.Path == "/login":
			// The login page: post the form, as a user would.
			form = url.Values{"id": {next.Query().Get("id")}, "username": {user}, "password": {password}}
			continue
		case resp.StatusCode != http.StatusFound:
			return "", "", "", fmt.Errorf("%s %s: %s: %s", req.Method, next.Redacted(), resp.Status, body)
		}
		loc, err := next.Parse(resp.Header.Get("Location"))
		if err != nil {
			return "", "", "", err
		}
		if q := loc.Query(); q.Get("code") != "" || q.Get("error") != "" {
			if q.Get("error") != "" {
				return "", "", "", fmt.Errorf("authorization failed: %s: %s", q.Get("error"), q.Get("error_description"))
			}
			return q.Get("code"), q.Get("state"), q.Get("iss"), nil
		}
		next = loc
	}
	return "", "", "", fmt.Errorf("no code after 5 redirects from %s", authURL)
}
