package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The tests of this package serve a small catalog in process: service
// "svc" with route, whose arguments travel in Mcp-Param-* headers too,
// and ping. Each handler records the arguments it ran with.

// ran records the arguments each handler ran with, as it received them.
// wait, when not nil, holds every call of the tool wait until it closes.
type ran struct {
	mu   sync.Mutex
	args []string
	wait chan struct{}
}

func (r *ran) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.args = append(r.args, s)
}

// take returns what ran since the last take.
func (r *ran) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.args
	r.args = nil
	return out
}

func ptr[T any](v T) *T { return &v }

// testCatalog is the catalog of the package's tests.
func testCatalog() *catalog.Catalog {
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "svc", Version: "1.0.0", Description: "A service for testing the MCP server",
		Tools: []*catalog.Tool{{
			Name: "route", Description: "Say where a request would go",
			Request: catalog.Message{Fields: []*catalog.Field{
				{Name: "region", Type: catalog.String, Description: "The region", Required: true, MCPHeader: "Region"},
				{Name: "tenant", Type: catalog.Integer, Description: "The tenant", MCPHeader: "Tenant"},
				{Name: "dry_run", Type: catalog.Boolean, Description: "Only say where", MCPHeader: "Dry-Run"},
				{Name: "zone", Type: catalog.String, Description: "The zone", Default: "z1", MCPHeader: "Zone"},
				{Name: "note", Type: catalog.String, Description: "A note, in no header", MaxLength: ptr(int64(1 << 20))},
			}},
		}, {
			Name: "ping", Description: "Answer",
			Request: catalog.Message{Fields: []*catalog.Field{
				{Name: "text", Type: catalog.String, Description: "What to echo"},
			}},
		}, {
			Name: "wait", Description: "Answer once the test lets it",
			Request: catalog.Message{Fields: []*catalog.Field{
				{Name: "text", Type: catalog.String, Description: "What to echo"},
			}},
		}},
	}, {
		// vault's tools are hidden from a caller without vault:use.
		Name: "vault", Version: "1.0.0", Description: "A guarded service", Scopes: []string{"vault:use"},
		Tools: []*catalog.Tool{{
			Name: "open", Description: "Open a door", Scopes: []string{"vault:use"},
			Request: catalog.Message{Fields: []*catalog.Field{
				{Name: "door", Type: catalog.String, Description: "The door", Required: true, MCPHeader: "Door"},
			}},
		}},
	}}}
	cat.Seal()
	return cat
}

// testRuntime serves testCatalog in process; the handlers record into r.
func testRuntime(t testing.TB, r *ran) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(testCatalog(), testDispatchers(r)); err != nil {
		t.Fatal(err)
	}
	return rt
}

// testDispatchers are testCatalog's handlers, which record into r.
func testDispatchers(r *ran) map[string]runtime.Dispatcher {
	record := func(tool string) plugins.Handler {
		return plugins.Handle(tool, func(ctx context.Context, args json.RawMessage) (*plugins.Result, error) {
			r.add(tool + " " + string(args))
			if tool == "wait" && r.wait != nil {
				select {
				case <-r.wait:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return plugins.Text(string(args)), nil
		})
	}
	return map[string]runtime.Dispatcher{
		"svc":   runtime.Local(record("route"), record("ping"), record("wait")),
		"vault": runtime.Local(record("open")),
	}
}

// mcpNameOf returns the MCP name of a tool of rt.
func mcpNameOf(t testing.TB, rt *runtime.Runtime, tool string) string {
	t.Helper()
	info, ok := rt.Snapshot().ByName(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	return info.MCPName
}

// serveMCP serves rt's MCP server over Streamable HTTP, as
// NewHTTPHandler makes it, for the test's duration.
func serveMCP(t testing.TB, rt *runtime.Runtime, opts HTTPOptions) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(NewHTTPHandler(rt, New(rt, Options{}), opts))
	t.Cleanup(ts.Close)
	return ts
}

// answer is a JSON-RPC answer as it arrives over HTTP, in JSON or as the
// last data line of an SSE stream.
type answer struct {
	status int
	raw    string
	sid    string // the Mcp-Session-Id of the answer
	ID     json.RawMessage
	Result map[string]any
	Error  *struct {
		Code    int
		Message string
	}
}

// postMCP POSTs body to url's /mcp with the headers (besides Accept and
// Content-Type), and decodes the answer.
func postMCP(t testing.TB, url, body string, header http.Header) answer {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	// A bound on a hang, not a measure: a 512 KiB request under -race on
	// a loaded machine (load 26, TestSessionKeepsLittle) took over 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	out := answer{status: resp.StatusCode, raw: string(data), sid: resp.Header.Get("Mcp-Session-Id")}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		last := ""
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && d != "" {
				last = d
			}
		}
		data = []byte(last)
	}
	_ = json.Unmarshal(data, &out)
	return out
}

// meta2026 is the _meta of a 2026-07-28 request, as JSON.
const meta2026 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// header2026 are the headers of a 2026-07-28 request of method for the
// tool name ("" for none), and kv, pairs of more.
func header2026(method, name string, kv ...string) http.Header {
	h := http.Header{}
	h.Set("MCP-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// connect connects go-sdk's client to url's /mcp at the revision, through
// rt (nil for http.DefaultTransport).
func connect(t testing.TB, url, revision string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	if rt == nil {
		rt = http.DefaultTransport
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
