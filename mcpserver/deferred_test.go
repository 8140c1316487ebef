package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// echo is a dispatcher that answers every tool of a service with the
// tool's name and its arguments.
type echo struct{ tools []string }

func (e echo) Tools() []string { return e.tools }

func (e echo) Call(_ context.Context, tool, _ string, args json.RawMessage, _ func(runtime.Event)) (*runtime.Result, error) {
	return &runtime.Result{Content: []plugins.Content{{Type: "text", Text: tool + " " + string(args)}}}, nil
}

// TestDeferredCorpus serves the bench corpus of 2,000 tools with all but
// one service's 20 deferred: tools/list holds those 20 and the search
// tool; a search for a deferred tool, in words of its description, finds
// it; and a deferred tool is called by its MCP name, over Streamable HTTP,
// by every client toolc tests with: go-sdk's, mcp-go's and the official
// TypeScript SDK's (when scripts/test has installed it).
func TestDeferredCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a corpus of 2,000 tools")
	}
	dir := filepath.Join(t.TempDir(), "corpus")
	if _, err := corpus.Write(dir, corpus.ForTools(2000)); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	cat := res.Catalog
	dispatchers := map[string]runtime.Dispatcher{}
	var target *catalog.Tool
	var targetMCP string
	for i, s := range cat.Services {
		var names []string
		for _, tl := range s.Tools {
			names = append(names, tl.Name)
			tl.Deferred = i > 0
			tl.Response = nil // echo returns text, no structured content
			if i == 42 && target == nil && len(tl.Examples) > 0 {
				target, targetMCP = tl, tl.ExposedMCPName(s.Name)
			}
		}
		dispatchers[s.Name] = echo{names}
	}
	cat.Seal()
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, dispatchers); err != nil {
		t.Fatal(err)
	}
	ts := serveMCP(t, rt, HTTPOptions{})
	first, _, _ := strings.Cut(target.Description, ". ")
	example := target.Examples[0]
	exampleJSON, _ := json.Marshal(example)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// go-sdk
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	list, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if len(list.Tools) != corpus.DefaultToolsPerService+1 || !strings.Contains(strings.Join(names, " "), catalog.SearchToolName) {
		t.Fatalf("tools/list has %d tools, want %d and %s: %v", len(list.Tools), corpus.DefaultToolsPerService, catalog.SearchToolName, names)
	}
	found, err := session.CallTool(ctx, &mcp.CallToolParams{Name: catalog.SearchToolName, Arguments: map[string]any{"query": first}})
	if err != nil || found.IsError {
		t.Fatalf("search: %v %+v", err, found)
	}
	var hits struct {
		Tools []struct {
			Name, MCPName string
			Meta          map[string]any `json:"_meta"`
			InputSchema   map[string]any `json:"inputSchema"`
		}
	}
	data, _ := json.Marshal(found.StructuredContent)
	if err := json.Unmarshal(data, &hits); err != nil {
		t.Fatal(err)
	}
	ok := false
	for _, h := range hits.Tools {
		if h.MCPName == targetMCP && h.Meta[catalog.MCPDeferLoadingKey] == true && h.InputSchema["type"] == "object" {
			ok = true
		}
	}
	if !ok || len(hits.Tools) > 5 {
		t.Fatalf("search for %q: %s; want %s among at most 5", first, data, targetMCP)
	}
	call, err := session.CallTool(ctx, &mcp.CallToolParams{Name: targetMCP, Arguments: example})
	if err != nil {
		t.Fatal(err)
	}
	if text := call.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, target.Name+" {") || call.IsError {
		t.Errorf("go-sdk: calling deferred %s: %q", targetMCP, text)
	}

	// mcp-go
	mc, err := mcpgo.NewStreamableHttpClient(ts.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcpgotypes.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgotypes.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgotypes.Implementation{Name: "mcp-go", Version: "1"}
	if _, err := mc.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	tools, err := mc.ListTools(ctx, mcpgotypes.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != corpus.DefaultToolsPerService+1 {
		t.Errorf("mcp-go: tools/list has %d tools", len(tools.Tools))
	}
	req := mcpgotypes.CallToolRequest{}
	req.Params.Name = targetMCP
	req.Params.Arguments = example
	out, err := mc.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Content[0].(mcpgotypes.TextContent).Text; !strings.HasPrefix(text, target.Name+" {") || out.IsError {
		t.Errorf("mcp-go: calling deferred %s: %q", targetMCP, text)
	}

	// The TypeScript SDK: the same steps, in testdata/deferred/tsdeferred.mjs.
	t.Run("typescript-sdk", func(t *testing.T) {
		node, sdk := os.Getenv("TOOLC_NODE"), os.Getenv("TOOLC_TS_SDK")
		if node == "" || sdk == "" {
			if os.Getenv("TOOLC_REQUIRE_NODE") != "" {
				t.Fatal("TOOLC_REQUIRE_NODE is set, but TOOLC_NODE or TOOLC_TS_SDK is not")
			}
			t.Skip("needs TOOLC_NODE and TOOLC_TS_SDK, which scripts/test sets")
		}
		script, _ := filepath.Abs("testdata/deferred/tsdeferred.mjs")
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, node, script, sdk, ts.URL+"/mcp", first, targetMCP, string(exampleJSON)).Output()
		var got struct {
			Error, Protocol, Text string
			Listed                []string
			SearchError, IsError  bool
			Found                 []struct {
				MCPName         string
				Meta            map[string]any
				InputSchemaType string
			}
		}
		if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil {
			t.Fatalf("tsdeferred.mjs: %v; printed %s", err, out)
		}
		if len(got.Listed) != corpus.DefaultToolsPerService+1 || !slices.Contains(got.Listed, catalog.SearchToolName) || slices.Contains(got.Listed, targetMCP) {
			t.Errorf("typescript-sdk: tools/list has %d tools, want %d and %s, without %s: %v", len(got.Listed), corpus.DefaultToolsPerService, catalog.SearchToolName, targetMCP, got.Listed)
		}
		ok := false
		for _, f := range got.Found {
			ok = ok || f.MCPName == targetMCP && f.Meta[catalog.MCPDeferLoadingKey] == true && f.InputSchemaType == "object"
		}
		if !ok || got.SearchError || len(got.Found) > 5 {
			t.Errorf("typescript-sdk: search for %q found %+v; want %s among at most 5", first, got.Found, targetMCP)
		}
		if !strings.HasPrefix(got.Text, target.Name+" {") || got.IsError {
			t.Errorf("typescript-sdk (%s): calling deferred %s: %q", got.Protocol, targetMCP, got.Text)
		}
	})

	// The function-call path: toolc_call_tool, as a Chat Completions
	// model would call it.
	args, _ := json.Marshal(map[string]any{"name": target.Name, "arguments": string(exampleJSON)})
	r, err := rt.Call(ctx, catalog.CallToolName, args)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Content[0].Text, target.Name+" {") || r.IsError {
		t.Errorf("%s %s: %+v", catalog.CallToolName, target.Name, r)
	}
}
