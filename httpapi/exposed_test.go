package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/runtime"
)

func TestExposed(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8931": false, "127.3.4.5:1": false, "[::1]:8931": false, "localhost:8931": false,
		"[::ffff:127.0.0.1]:1": false,
		":8931":                true, "0.0.0.0:8931": true, "[::]:8931": true, "10.0.0.1:8931": true, "[2001:db8::1]:1": true,
		"192.168.1.5:0": true,
	} {
		got, err := httpapi.Exposed(context.Background(), addr)
		if err != nil || got != want {
			t.Errorf("Exposed(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := httpapi.Exposed(context.Background(), "no-port"); err == nil {
		t.Error("an address without a port passes")
	}
}

// TestHTTPRebindingExposed: on a listener that other machines reach, a
// request under a name is what a page that rebound its domain to the
// server's address sends. Without a token, only requests to the IP
// address are served; with one, the token protects the server, and names
// (a reverse proxy's, a DNS name's) are served.
func TestHTTPRebindingExposed(t *testing.T) {
	send := func(h http.Handler, host, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/v1/call", strings.NewReader(`{"name":"ping"}`))
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		local := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 8931}
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(local)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	open := envelopeHandler(t, runtime.Options{})
	for _, host := range []string{"evil.example:8931", "evil.example", "toolc.internal:8931"} {
		if w := send(open, host, ""); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "serve it with --token to reach it by name") {
			t.Errorf("Host %s without a token: %d %s", host, w.Code, w.Body)
		}
	}
	for _, host := range []string{"192.168.1.5:8931", "[fe80::1]:8931", "localhost:8931"} {
		if w := send(open, host, ""); w.Code != http.StatusOK {
			t.Errorf("Host %s without a token: %d %s", host, w.Code, w.Body)
		}
	}
	guarded := envelopeHandler(t, runtime.Options{}, httpapi.Options{Token: "s3cret"})
	for _, host := range []string{"toolc.internal:8931", "192.168.1.5:8931"} {
		if w := send(guarded, host, "s3cret"); w.Code != http.StatusOK {
			t.Errorf("Host %s with the token: %d %s", host, w.Code, w.Body)
		}
		if w := send(guarded, host, ""); w.Code != http.StatusUnauthorized {
			t.Errorf("Host %s without the token: %d %s", host, w.Code, w.Body)
		}
	}
}
