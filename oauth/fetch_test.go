package oauth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/oauth"
)

// verifyAsync verifies tok in a goroutine and sends its error.
func verifyAsync(ctx context.Context, v *oauth.Verifier, tok string) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, tok)
		out <- err
	}()
	return out
}

// within receives from ch, failing the test if nothing comes in time.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: nothing after 5s", what)
		panic("unreachable")
	}
}

// TestSharedFetch: the fetch of the keys for an unknown kid is one flight
// that every caller who needs it joins, and that each leaves on its own
// context: a caller whose context ends returns at once, while the fetch
// goes on and serves the others, whoever started it. It used to be a
// mutex held across the HTTP request, on the context of the caller who
// took it: the others could not leave, and when that caller left, the
// fetch ended for them all.
func TestSharedFetch(t *testing.T) {
	for _, tt := range []struct {
		name string
		// leaverFirst: the caller who leaves is the one who started the
		// fetch; otherwise it joins one that another caller started.
		leaverFirst bool
	}{
		{"the caller who started it leaves", true},
		{"a caller who joined it leaves", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iss := NewIssuer(t)
			old, next := newEC(t, "old"), newEC(t, "next")
			iss.Publish(old)
			v := newVerifier(t, iss, time.Hour)
			iss.Publish(old, next)
			arrived, release := iss.Hold(t)
			tok := iss.Token(t, next, Claims{Sub: "a"})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var leaver, stayer <-chan error
			if tt.leaverFirst {
				leaver = verifyAsync(ctx, v, tok)
				within(t, arrived, "the fetch of the keys")
				stayer = verifyAsync(context.Background(), v, tok)
			} else {
				stayer = verifyAsync(context.Background(), v, tok)
				within(t, arrived, "the fetch of the keys")
				leaver = verifyAsync(ctx, v, tok)
			}
			cancel()
			if err := within(t, leaver, "the caller whose context ended, while the fetch is held"); err == nil {
				t.Fatal("the caller who left verified a token whose key was not fetched yet")
			}
			release()
			if err := within(t, stayer, "the caller who stayed"); err != nil {
				t.Fatalf("the caller who stayed: %v; want the token verified by the fetch that went on", err)
			}
			if n := iss.fetches.Load(); n != 2 {
				t.Errorf("%d fetches, want 2: one at start, one shared", n)
			}
		})
	}
}

// TestRedirectsHeldToTheRule: the metadata and the keys must come over
// https, or http on a loopback address, and so must every redirect on
// the way to them: a jwks_uri on loopback that redirects to plain http on
// another host handed that host the keys. The client here dials every
// host at the test's server, so that a redirect that is followed succeeds
// and only the rule refuses it.
func TestRedirectsHeldToTheRule(t *testing.T) {
	k := newEC(t, "k")
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k.pub, KeyID: k.kid, Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	// keys.example.com's https server: the test certificate names
	// example.com and its subdomains.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(jwks)
	}))
	defer tlsSrv.Close()
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())

	for _, tt := range []struct {
		name string
		// meta and keys are where the metadata and the keys redirect
		// to ("" serves them); ISS is the issuer's URL, PORT the https
		// server's port.
		meta, keys string
		want       string
	}{
		{"keys redirected to http on another host", "", "http://keys.example.com/jwks", "redirected to http://keys.example.com/jwks, which is not https"},
		{"keys redirected twice, then to http", "", "ISS/hop?to=http://keys.example.com/jwks", "redirected to http://keys.example.com/jwks, which is not https"},
		{"metadata redirected to http on another host", "http://auth.example.com/.well-known/oauth-authorization-server", "", "redirected to http://auth.example.com/.well-known/oauth-authorization-server, which is not https"},
		{"keys redirected to loopback", "", "ISS/real-jwks", ""},
		{"keys redirected to https", "", "https://keys.example.com:PORT/jwks", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var iss string
			expand := func(s string) string {
				return strings.NewReplacer("ISS", iss, "PORT", tlsPort).Replace(s)
			}
			mux := http.NewServeMux()
			serveMeta := func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": iss + "/jwks"})
			}
			mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				if tt.meta != "" && r.Host != "auth.example.com" {
					http.Redirect(w, r, expand(tt.meta), http.StatusFound)
					return
				}
				serveMeta(w, r)
			})
			mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
				if tt.keys != "" && r.Host != "keys.example.com" {
					http.Redirect(w, r, expand(tt.keys), http.StatusFound)
					return
				}
				w.Write(jwks)
			})
			mux.HandleFunc("GET /real-jwks", func(w http.ResponseWriter, r *http.Request) { w.Write(jwks) })
			mux.HandleFunc("GET /hop", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			iss = srv.URL

			roots := x509.NewCertPool()
			roots.AddCert(tlsSrv.Certificate())
			client := &http.Client{Transport: &http.Transport{
				// Every host is the test's: example.com's names lead to
				// its servers, as DNS would lead them to an attacker's.
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					to := srv.Listener.Addr().String()
					if strings.HasSuffix(addr, ":"+tlsPort) {
						to = tlsSrv.Listener.Addr().String()
					}
					return (&net.Dialer{}).DialContext(ctx, network, to)
				},
				TLSClientConfig: &tls.Config{RootCAs: roots},
			}}
			_, err := oauth.New(context.Background(), oauth.Config{Issuer: iss, Resource: resource, HTTPClient: client})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v; want refused with %q", err, tt.want)
			}
		})
	}
}

// TestRedirectPolicyKept: the check of each hop comes before the
// client's own redirect policy, which still applies.
func TestRedirectPolicyKept(t *testing.T) {
	iss := NewIssuer(t)
	iss.Publish(newEC(t, "k"))
	stop := errors.New("the client's policy")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return stop }}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, iss.URL+r.URL.Path, http.StatusFound)
	})
	front := httptest.NewServer(mux)
	defer front.Close()
	// The metadata names iss as the issuer, not front: only the
	// redirect matters here, and the client's policy stops it first.
	_, err := oauth.New(context.Background(), oauth.Config{Issuer: front.URL, Resource: resource, HTTPClient: client})
	if err == nil || !strings.Contains(err.Error(), stop.Error()) {
		t.Fatalf("New = %v, want the client's redirect policy to stop it", err)
	}
	if client.CheckRedirect == nil || client.CheckRedirect(nil, nil) != stop {
		t.Error("New changed the HTTPClient it was given")
	}
}
