package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// BenchmarkCallAuth compares one /v1/call with --token and with OAuth (an
// RS256 and an ES256 access token, keys cached), on the same runtime, an
// in-process tool, over loopback HTTP with keep-alive. Run with -count so
// that the sub-benchmarks interleave on a loaded machine.
func BenchmarkCallAuth(b *testing.B) {
	res, err := compiler.Compile(compiler.Config{}, "./testdata/guarded")
	if err != nil || res.HasErrors() {
		b.Fatalf("%v %v", err, res.Diagnostics)
	}
	h := func(name string) plugins.Handler {
		return plugins.Handle(name, func(_ context.Context, req struct{ ID string }) (*plugins.Result, error) {
			return plugins.Text(req.ID), nil
		})
	}
	rt := runtime.New(runtime.Options{Audit: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"guarded": runtime.Local(h("list_notes"), h("read_note"), h("write_note"))}); err != nil {
		b.Fatal(err)
	}
	iss := newTestIssuer(b)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.url, Resource: testResource})
	if err != nil {
		b.Fatal(err)
	}
	tokenURL := serveHTTP(b, rt, runtime.HTTPOptions{Token: "s3cret-token"}).URL
	oauthURL := serveHTTP(b, rt, runtime.HTTPOptions{OAuth: v}).URL
	body := `{"name": "read_note", "arguments": {"id": "n1"}}`
	run := func(url, token string) func(b *testing.B) {
		return func(b *testing.B) {
			client := &http.Client{}
			for b.Loop() {
				req, _ := http.NewRequest("POST", url+"/v1/call", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		}
	}
	scopes := "notes:use notes:read"
	b.Run("token", run(tokenURL, "s3cret-token"))
	b.Run("oauth-RS256", run(oauthURL, iss.token(b, jose.RS256, "alice", scopes)))
	b.Run("oauth-ES256", run(oauthURL, iss.token(b, jose.ES256, "alice", scopes)))
}
