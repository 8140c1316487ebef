package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/oauth"
	pluginrpc "github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

func guardedCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{Dir: runtimetest.Root()}, "./runtime/testdata/guarded")
	if err != nil || res.HasErrors() {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	return res.Catalog
}

// servePlugin serves cat with d, over OAuth and, on a second server, with
// a shared token, and returns the two URLs and the issuer.
func servePlugin(t *testing.T, cat *catalog.Catalog, d runtime.Dispatcher) (oauthURL, tokenURL string, iss *runtimetest.Issuer) {
	t.Helper()
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"guarded": d}); err != nil {
		t.Fatal(err)
	}
	iss = runtimetest.NewIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: runtimetest.TestResource})
	if err != nil {
		t.Fatal(err)
	}
	return runtimetest.ServeHTTP(t, rt, httpapi.Options{OAuth: v}).URL, runtimetest.ServeHTTP(t, rt, httpapi.Options{Token: "s3cret"}).URL, iss
}

// TestCallerAcrossPlugin: the README's handler (testdata/guarded/main.go),
// built and run as a plugin, sees the OAuth caller's subject, client and
// scopes over /v1/call and MCP, and no caller with --token.
func TestCallerAcrossPlugin(t *testing.T) {
	cat := guardedCatalog(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := host.Build(ctx, t.TempDir(), runtimetest.Root(), cat.Services[0])
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testsync.Buffer{}
	ps, err := host.Start(ctx, []*host.Binary{bin}, host.Options{Stderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Stop(ps, 0) })
	url, tokenURL, iss := servePlugin(t, cat, ps["guarded"])
	tok := iss.Token(t, jose.RS256, "alice", "notes:use notes:read")
	const want = `{"tool":"read_note","id":"n1","subject":"alice","client":"test-client","scopes":["notes:use","notes:read"]}`

	r := runtimetest.Do(t, "POST", url+"/v1/call", `{"name": "read_note", "arguments": {"id": "n1"}}`, map[string]string{"Authorization": "Bearer " + tok})
	if res := runtimetest.DecodeCall(t, r); res.IsError || len(res.Content) != 1 || res.Content[0].Text != want {
		t.Errorf("/v1/call: %+v, want %s", res, want)
	}
	for _, revision := range []string{"2025-06-18", "2026-07-28"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "caller-test", Version: "0"}, nil)
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: runtimetest.BearerTransport{Token: tok}}},
			&mcp.ClientSessionOptions{ProtocolVersion: revision})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "guarded_read_note", Arguments: map[string]any{"id": "n1"}})
		s.Close()
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
			t.Errorf("MCP %s: %+v %v, want %s", revision, res, err, want)
		}
	}
	r = runtimetest.Do(t, "POST", tokenURL+"/v1/call", `{"name": "read_note", "arguments": {"id": "n1"}}`, map[string]string{"Authorization": "Bearer s3cret"})
	if res := runtimetest.DecodeCall(t, r); !res.IsError || res.Content[0].Text != "read_note acts for a signed-in user; serve it with --auth-issuer" {
		t.Errorf("/v1/call with --token: %+v, want the handler's refusal of an anonymous caller", res)
	}
	if t.Failed() {
		t.Logf("plugin stderr:\n%s", stderr)
	}
}

// TestTokenNeverReachesPlugin: a plugin that writes down every byte it
// receives (its arguments, its environment, each call's request as
// protobuf and its gRPC metadata) never receives the access token, nor any
// of its three parts, while it does receive the caller.
func TestTokenNeverReachesPlugin(t *testing.T) {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir, "../plugins/internal/testplugin/raw")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the raw plugin: %v\n%s", err, out)
	}
	dump := filepath.Join(dir, "received")
	p, err := host.StartPlugin(context.Background(), pluginrpc.ClientConfig{Service: "guarded", Path: filepath.Join(dir, "raw"),
		Args: []string{"-dump", dump, "-tools", "list_notes,read_note,write_note"}, Stderr: &testsync.Buffer{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(0) })
	url, _, iss := servePlugin(t, guardedCatalog(t), p)
	tok := iss.Token(t, jose.ES256, "alice", "notes:use notes:read notes:write")
	auth := map[string]string{"Authorization": "Bearer " + tok}

	for _, body := range []string{
		`{"name": "read_note", "arguments": {"id": "n1"}}`,
		`{"name": "list_notes", "arguments": {}}`,
	} {
		if r := runtimetest.Do(t, "POST", url+"/v1/call", body, auth); r.Status != 200 || !strings.Contains(r.Body, `"text":"caller"`) {
			t.Fatalf("/v1/call %s: %d %s, want the raw plugin's caller block", body, r.Status, r.Body)
		}
	}
	s := runtimetest.MCPSession(t, url, tok)
	if _, err := s.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "guarded_write_note", Arguments: map[string]any{"id": "n2"}}); err != nil || res.IsError {
		t.Fatalf("MCP write_note: %v %v", res, err)
	}

	received, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(received, []byte("\ncall ")); n != 3 {
		t.Fatalf("the plugin wrote down %d calls, want 3:\n%q", n, received)
	}
	for _, want := range []string{"alice", "test-client", "notes:write", `{"id":"n2"}`, "metadata: map["} {
		if !bytes.Contains(received, []byte(want)) {
			t.Errorf("what the plugin received lacks %q, so the dump is not all of it:\n%q", want, received)
		}
	}
	secrets := append([]string{tok}, strings.Split(tok, ".")...)
	for _, s := range secrets {
		if bytes.Contains(received, []byte(s)) {
			t.Errorf("the plugin received the token's bytes %.20q...", s)
		}
	}
}
