package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServeAuthFlags: the OAuth flags' usage errors exit 2 with a message
// that says what to do, before anything is compiled or built, and an
// issuer that cannot be reached at start is one of them.
func TestServeAuthFlags(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	noMeta := httptest.NewServer(http.NotFoundHandler())
	defer noMeta.Close()
	t.Setenv("TOOLC_TOKEN", "")
	for _, cmd := range []string{"serve", "dev"} {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--auth-issuer", gone.URL}, "--auth-issuer and --auth-resource go together"},
			{[]string{"--auth-resource", "http://127.0.0.1:8931/mcp"}, "--auth-issuer and --auth-resource go together"},
			{[]string{"--auth-issuer", gone.URL, "--auth-resource", "http://127.0.0.1:8931/mcp", "--token", "t"}, "--auth-issuer and --token (or $TOOLC_TOKEN) are two ways to guard the server; give one of them"},
			{[]string{"--auth-issuer", gone.URL, "--auth-resource", "http://127.0.0.1:8931/mcp", "--stdio"}, "with --stdio"},
			{[]string{"--auth-issuer", gone.URL, "--auth-resource", "http://127.0.0.1:8931/mcp"}, "connection refused"},
			{[]string{"--auth-issuer", noMeta.URL, "--auth-resource", "http://127.0.0.1:8931/mcp"}, "publishes no metadata at /.well-known/oauth-authorization-server or /.well-known/openid-configuration"},
			{[]string{"--auth-issuer", noMeta.URL, "--auth-resource", "/mcp"}, `resource "/mcp" is not an http or https URL`},
		} {
			args := append([]string{cmd}, append(tt.args, "./examples/weather")...)
			r := toolc(t, "../..", args...)
			if r.status != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("toolc %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(args, " "), r.status, r.stderr, tt.want)
			}
		}
	}
}
