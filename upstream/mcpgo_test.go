package upstream_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"
)

// TestMCPGoServer holds an mcp-go server, over Streamable HTTP, to the
// contract stated from its own tools: the call goes through, an unknown
// argument never reaches it, and a tool it adds later is not served.
func TestMCPGoServer(t *testing.T) {
	srv := mcpgoserver.NewMCPServer("mcp-go-upstream", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	var mu sync.Mutex
	var seen []map[string]any
	srv.AddTool(mcpgo.NewToolWithRawSchema("get-sum", "Add two numbers",
		json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"First"},"b":{"type":"number","description":"Second"}},"required":["a","b"]}`)),
		func(_ context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			args := r.GetArguments()
			mu.Lock()
			seen = append(seen, args)
			mu.Unlock()
			a, _ := args["a"].(float64)
			b, _ := args["b"].(float64)
			return mcpgo.NewToolResultText(jsonNumber(a + b)), nil
		})
	ts := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(srv))
	defer ts.Close()

	list, err := upstream.List(context.Background(), &catalog.Service{Name: "sum", Dir: t.TempDir(), Upstream: &catalog.Upstream{URL: ts.URL}}, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := &catalog.Service{Name: "sum", Version: "1.0.0", Description: "Sums", Dir: t.TempDir(), Upstream: &catalog.Upstream{URL: ts.URL, CheckInterval: "100ms"}}
	for _, lt := range list.Tools {
		st := upstream.State(lt)
		if st.Tool == nil {
			t.Fatalf("%s: %s", lt.Name, st.Missing)
		}
		svc.Tools = append(svc.Tools, st.Tool)
	}
	s, err := upstream.Start(context.Background(), svc, upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(time.Second)
	rt := runtime.New(runtime.Options{})
	cat := &catalog.Catalog{Services: []*catalog.Service{svc}}
	if _, err := rt.Swap(s.Filter(cat), map[string]runtime.Dispatcher{"sum": s}); err != nil {
		t.Fatal(err)
	}
	r, err := rt.Call(context.Background(), "get-sum", json.RawMessage(`{"a":2,"b":40}`))
	if err != nil || r.IsError || r.Content[0].Text != "42" {
		t.Fatalf("get-sum = %+v, %v", r, err)
	}
	r, _ = rt.Call(context.Background(), "get-sum", json.RawMessage(`{"a":2,"b":40,"c":1}`))
	mu.Lock()
	calls := len(seen)
	mu.Unlock()
	if !r.IsError || calls != 1 {
		t.Errorf("an unknown argument: %+v; the server saw %d calls, want 1", r, calls)
	}
	// A tool added later is never served, and withdraws nothing.
	srv.AddTool(mcpgo.NewToolWithRawSchema("extra", "Added later", json.RawMessage(`{"type":"object"}`)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("x"), nil
		})
	time.Sleep(300 * time.Millisecond)
	if _, ok := rt.Snapshot().Lookup("extra"); ok || len(s.Withdrawn()) != 0 {
		t.Errorf("after the server added a tool: extra served %v, withdrawn %v", ok, s.Withdrawn())
	}
}

func jsonNumber(f float64) string {
	data, _ := json.Marshal(f)
	return string(data)
}
