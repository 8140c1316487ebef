package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// TestMCPListIsTheExport: the tools of a live tools/list, as the bytes
// arrive at a client over HTTP, are the bytes `toolc export --format mcp`
// prints (ProjectJSON), but for its indentation: same keys, same order,
// same annotations (go-sdk always sends readOnlyHint and idempotentHint),
// same escaping, same tool order.
func TestMCPListIsTheExport(t *testing.T) {
	res, err := compiler.Compile(compiler.Config{}, "../examples/...")
	if err != nil || res.HasErrors() {
		t.Fatal(err, res.Diagnostics)
	}
	cat := res.Catalog
	// Text that encoding/json would escape as HTML, and go-sdk does not.
	cat.Services[0].Tools[0].Description += " Use <path> & \u2028 'quotes'."
	cat.Seal()
	// Handlers that are never called: tools/list needs only the catalog.
	dispatchers := map[string]runtime.Dispatcher{}
	for _, s := range cat.Services {
		var hs []plugins.Handler
		for _, tl := range s.Tools {
			hs = append(hs, plugins.Handle(tl.Name, func(context.Context, map[string]any) (*plugins.Result, error) {
				return plugins.Text("unused"), nil
			}))
		}
		for _, p := range s.Prompts {
			if p.Messages == nil {
				hs = append(hs, plugins.HandlePrompt(p.Name, func(context.Context, map[string]string) ([]plugins.PromptMessage, error) {
					return nil, nil
				}))
			}
		}
		for _, r := range s.Resources {
			if !r.Static() {
				hs = append(hs, plugins.HandleResource(r.Name, func(context.Context, plugins.ResourceRequest[map[string]string]) ([]plugins.ResourceContents, error) {
					return nil, nil
				}))
			}
		}
		dispatchers[s.Name] = runtime.Local(hs...)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, dispatchers); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"})
	ts := httptest.NewServer(httpapi.NewHandler(rt, srv, httpapi.Options{}))
	defer ts.Close()

	tap := &resultTap{Transport: &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, tap, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if _, err := session.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var live struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(tap.last(), &live); err != nil {
		t.Fatal(err)
	}
	export, err := cat.ProjectJSON(catalog.MCP, catalog.ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, export); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(live.Tools, want.Bytes()) {
		var got bytes.Buffer
		json.Indent(&got, live.Tools, "", "  ")
		t.Errorf("tools/list differs from toolc export --format mcp:\n%s", lineDiff(got.String(), string(export)))
	}
}

// resultTap is a client transport that keeps the raw result of the last
// response the client read.
type resultTap struct {
	mcp.Transport
	mu     sync.Mutex
	result json.RawMessage
}

func (r *resultTap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tapConn{Connection: c, tap: r}, nil
}

func (r *resultTap) last() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

type tapConn struct {
	mcp.Connection
	tap *resultTap
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && resp.Result != nil {
		c.tap.mu.Lock()
		c.tap.result = append(json.RawMessage(nil), resp.Result...)
		c.tap.mu.Unlock()
	}
	return m, err
}

// lineDiff shows the lines between the common head and tail of a and b.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	var out strings.Builder
	for _, l := range x[max(0, head-3):head] {
		out.WriteString("  " + l + "\n")
	}
	for _, l := range x[head : len(x)-tail] {
		out.WriteString("- live   " + l + "\n")
	}
	for _, l := range y[head : len(y)-tail] {
		out.WriteString("+ export " + l + "\n")
	}
	return out.String()
}
