package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/httpapi"
)

// TestTaskToolsFromSDKClients: what the Go SDK clients get from task
// tools, as docs/serving.md tells. Neither go-sdk v1.8.0 nor mcp-go
// v1.2.1 speaks the Tasks extension of 2026-07-28 (SEP-2663): go-sdk has
// no tasks, and mcp-go only the experimental tasks of 2025-11-25
// (params.task, tasks/result), which no revision toolc serves defines.
// Without the extension declared, an "optional" tool runs as a plain call
// and a "required" one is refused with -32021 naming the extension, in
// every revision each client speaks.
func TestTaskToolsFromSDKClients(t *testing.T) {
	url := serveTasks(t, httpapi.Options{}) + "/mcp"
	ctx := context.Background()
	type caller func(name string) (string, error)
	clients := map[string]caller{}
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk", Version: "1"}, nil)
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		clients["go-sdk "+rev] = func(name string) (string, error) {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"ms": 300}})
			if err != nil {
				return "", err
			}
			return res.Content[0].(*mcp.TextContent).Text, nil
		}
	}
	mc, err := mcpgo.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mc.Close() })
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcpgotypes.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgotypes.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgotypes.Implementation{Name: "mcp-go", Version: "1"}
	if _, err := mc.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	clients["mcp-go"] = func(name string) (string, error) {
		req := mcpgotypes.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = map[string]any{"ms": 300}
		res, err := mc.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		return res.Content[0].(mcpgotypes.TextContent).Text, nil
	}
	for name, call := range clients {
		if got, err := call("job"); err != nil || got != "job worked 300 ms" {
			t.Errorf("%s: the optional task tool = %q, %v; want its result, run as a plain call", name, got, err)
		}
		// mcp-go names the error by its code (-32021) alone.
		if got, err := call("must"); err == nil || !strings.Contains(err.Error(), `extensions["io.modelcontextprotocol/tasks"]`) && !strings.Contains(err.Error(), "missing required client capability") {
			t.Errorf("%s: the required task tool = %q, %v; want -32021 naming the extension", name, got, err)
		}
	}
}
