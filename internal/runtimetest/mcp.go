package runtimetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// MCPClient is a go-sdk client session with what the server sent it.
type MCPClient struct {
	Session *mcp.ClientSession

	mu          sync.Mutex
	progress    []string
	logs        []string
	listChanged int
}

// Snapshot returns the progress and log notifications the client got, and
// how many list_changed.
func (c *MCPClient) Snapshot() (progress, logs []string, listChanged int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.progress), slices.Clone(c.logs), c.listChanged
}

func (c *MCPClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := req.Params
			c.mu.Lock()
			c.progress = append(c.progress, fmt.Sprintf("%v %g/%g %s", p.ProgressToken, p.Progress, p.Total, p.Message))
			c.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			p := req.Params
			c.mu.Lock()
			c.logs = append(c.logs, fmt.Sprintf("%s %v", p.Level, p.Data))
			c.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			c.listChanged++
			c.mu.Unlock()
		},
	}
}

// ConnectMCP connects a go-sdk client to the test server's /mcp, at the
// newest revision it speaks.
func ConnectMCP(t testing.TB, url string) *MCPClient {
	t.Helper()
	return ConnectMCPAt(t, url, "")
}

// Revisions are the MCP Revisions a client may speak to the one endpoint:
// 2026-07-28 without sessions, 2025-11-25 with them.
var Revisions = []string{"2026-07-28", "2025-11-25"}

// ConnectMCPAt connects a go-sdk client that asks for the revision ("":
// the newest go-sdk speaks), and checks that the server serves it in the
// revision's way: with a session for a legacy revision, without one for
// 2026-07-28.
func ConnectMCPAt(t testing.TB, url, revision string) *MCPClient {
	t.Helper()
	c := &MCPClient{}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, c.options())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wire := &wireLog{next: http.DefaultTransport}
	transport := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: wire}}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	c.Session = session
	if revision != "" {
		if _, err := session.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		versions, sessions := wire.seen()
		if !slices.Contains(versions, revision) {
			t.Errorf("a client of %s sent MCP-Protocol-Version %q", revision, versions)
		}
		if legacy := revision < "2026-07-28"; legacy != (len(sessions) > 0) {
			t.Errorf("a client of %s was given sessions %q", revision, sessions)
		}
	}
	return c
}

// wireLog records the MCP-Protocol-Version headers a client sends and the
// Mcp-Session-Id headers it is answered with.
type wireLog struct {
	next http.RoundTripper

	mu       sync.Mutex
	versions []string
	sessions []string
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if v := req.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(w.versions, v) {
		w.versions = append(w.versions, v)
	}
	if err == nil {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" && !slices.Contains(w.sessions, id) {
			w.sessions = append(w.sessions, id)
		}
	}
	return resp, err
}

func (w *wireLog) seen() (versions, sessions []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.versions), slices.Clone(w.sessions)
}

// ServeHTTP serves rt over HTTP, MCP included, for the test's duration.
func ServeHTTP(t testing.TB, rt *runtime.Runtime, opts httpapi.Options) *httptest.Server {
	t.Helper()
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"})
	ts := httptest.NewServer(httpapi.NewHandler(rt, srv, opts))
	t.Cleanup(ts.Close)
	return ts
}

// MCPName is the MCP name of a tool in the test catalog.
func MCPName(t testing.TB, tool string) string {
	t.Helper()
	for svc, tl := range fixture.Catalog.Tools() {
		if tl.Name == tool {
			return tl.ExposedMCPName(svc.Name)
		}
	}
	t.Fatalf("no tool %s", tool)
	return ""
}
