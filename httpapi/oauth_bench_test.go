package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// callAuthSetup serves one runtime, with an in-process tool, twice: once
// behind --token and once behind OAuth; it returns the two HTTP handlers,
// a third that serves the same catalog behind OAuth from a runtime with no
// audit log (to tell the audit line's cost from the guard's), a fourth
// behind --token with a token as long as the ES256 JWT (to tell the cost of
// sending a longer header from that of checking it), and an RS256 and an
// ES256 access token (keys cached).
func callAuthSetup(b *testing.B) (tokenH, oauthH, quietH, longH http.Handler, rs, es, long string) {
	res, err := compiler.Compile(compiler.Config{Dir: runtimetest.Root()}, "./runtime/testdata/guarded")
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
	quiet := runtime.New(runtime.Options{})
	if _, err := quiet.Swap(res.Catalog, map[string]runtime.Dispatcher{"guarded": runtime.Local(h("list_notes"), h("read_note"), h("write_note"))}); err != nil {
		b.Fatal(err)
	}
	iss := runtimetest.NewIssuer(b)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: runtimetest.TestResource})
	if err != nil {
		b.Fatal(err)
	}
	scopes := "notes:use notes:read"
	handler := func(rt *runtime.Runtime, opts httpapi.Options) http.Handler {
		return httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"}), opts)
	}
	rs, es = iss.Token(b, jose.RS256, "alice", scopes), iss.Token(b, jose.ES256, "alice", scopes)
	long = strings.Repeat("t", len(es))
	return handler(rt, httpapi.Options{Token: "s3cret-token"}), handler(rt, httpapi.Options{OAuth: v}), handler(quiet, httpapi.Options{OAuth: v}),
		handler(rt, httpapi.Options{Token: long}), rs, es, long
}

func serve(b *testing.B, h http.Handler) string {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv.URL
}

const callAuthBody = `{"name": "read_note", "arguments": {"id": "n1"}}`

func callOnce(b *testing.B, client *http.Client, url, token string) {
	req, _ := http.NewRequest("POST", url+"/v1/call", strings.NewReader(callAuthBody))
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

// BenchmarkCallAuth compares one /v1/call with --token and with OAuth (an
// RS256 and an ES256 access token, keys cached), on the same runtime, an
// in-process tool, over loopback HTTP with keep-alive. Run with -count so
// that the sub-benchmarks interleave on a loaded machine; on a loaded one,
// BenchmarkCallAuthPaired is the better measure.
func BenchmarkCallAuth(b *testing.B) {
	tokenH, oauthH, _, _, rs, es, _ := callAuthSetup(b)
	tokenURL, oauthURL := serve(b, tokenH), serve(b, oauthH)
	run := func(url, token string) func(b *testing.B) {
		return func(b *testing.B) {
			client := &http.Client{}
			for b.Loop() {
				callOnce(b, client, url, token)
			}
		}
	}
	b.Run("token", run(tokenURL, "s3cret-token"))
	b.Run("oauth-RS256", run(oauthURL, rs))
	b.Run("oauth-ES256", run(oauthURL, es))
}

// BenchmarkCallAuthPaired measures the guards in turn within every
// iteration (the order rotating), so that each sample of one guard has
// samples of the others taken within microseconds of it, under the same
// load: it reports the time per call of each and the ratios of the OAuth
// calls to the --token ones, in wall time and in the process's CPU time
// (client and server, as both are in this process), which the waiting for
// a CPU on a loaded machine moves much less. "loopback" calls over HTTP
// with keep-alive, a connection per guard; "in-process" calls the handler
// directly, which leaves out the network and shows the guards' own cost.
func BenchmarkCallAuthPaired(b *testing.B) {
	tokenH, oauthH, quietH, longH, rs, es, long := callAuthSetup(b)
	tokenURL, oauthURL, quietURL, longURL := serve(b, tokenH), serve(b, oauthH), serve(b, quietH), serve(b, longH)
	type guard struct {
		call       func()
		total, cpu time.Duration
	}
	measure := func(b *testing.B, guards []*guard) {
		for _, g := range guards {
			g.call() // connect, and fill the token cache
			g.total, g.cpu = 0, 0
		}
		n := 0
		for b.Loop() {
			for j := range guards {
				g := guards[(n+j)%len(guards)]
				cpu, start := runtimetest.SelfCPU(b), time.Now()
				g.call()
				g.total += time.Since(start)
				g.cpu += runtimetest.SelfCPU(b) - cpu
			}
			n++
		}
		per := func(g *guard) float64 { return float64(g.total.Nanoseconds()) / float64(n) }
		cpu := func(g *guard) float64 { return float64(g.cpu.Nanoseconds()) / float64(n) }
		names := []string{"token", "rs256", "es256", "es256-noaudit", "longtoken"}
		for i, g := range guards {
			b.ReportMetric(per(g), names[i]+"-ns/call")
			b.ReportMetric(cpu(g), names[i]+"-cpu-ns/call")
			if i > 0 {
				b.ReportMetric(per(g)/per(guards[0]), names[i]+"/token")
				b.ReportMetric(cpu(g)/cpu(guards[0]), names[i]+"/token-cpu")
			}
		}
		b.ReportMetric(per(guards[2])/per(guards[4]), "es256/longtoken")
		b.ReportMetric(cpu(guards[2])/cpu(guards[4]), "es256/longtoken-cpu")
	}
	b.Run("loopback", func(b *testing.B) {
		over := func(url, token string) *guard {
			client := &http.Client{Transport: &http.Transport{}}
			return &guard{call: func() { callOnce(b, client, url, token) }}
		}
		measure(b, []*guard{over(tokenURL, "s3cret-token"), over(oauthURL, rs), over(oauthURL, es), over(quietURL, es), over(longURL, long)})
	})
	b.Run("in-process", func(b *testing.B) {
		in := func(h http.Handler, token string) *guard {
			return &guard{call: func() {
				req := httptest.NewRequest("POST", "/v1/call", strings.NewReader(callAuthBody))
				req.Header.Set("Authorization", "Bearer "+token)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}}
		}
		measure(b, []*guard{in(tokenH, "s3cret-token"), in(oauthH, rs), in(oauthH, es), in(quietH, es), in(longH, long)})
	})
}
