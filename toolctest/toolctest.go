// Package toolctest calls a service's tools in a test the way a model
// does: over MCP, in memory, through the same runtime and MCP server that
// toolc serve runs. A call is validated against the contract, gets the
// contract's defaults, reaches the handler, and its result is held to the
// contract's response fields before the test reads it. Calling a handler
// method directly skips all of that.
//
// New serves a compiled contract (catalog JSON, as toolc build writes it)
// with handler values and connects a client to it:
//
//	c := toolctest.New(t, contract, Handlers(handler{})...)
//	res, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
//
// toolc gen go writes, beside each service's generated code, a test file
// (tools_gen_test.go) that holds the service's compiled contract and a
// typed client over this package, so that a test needs no CUE and no
// toolc:
//
//	c := newTestClient(t, handler{})
//	resp, err := c.Echo(t.Context(), map[string]any{"message": "hi"})
//	// resp is an *EchoResponse; a tool error is a *toolctest.ToolError
//
// The anchor is FastMCP's in-memory Client: the same protocol a model's
// client speaks, with no process and no network.
package toolctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// Client is an MCP client connected in memory to a server of one compiled
// contract and its handlers.
type Client struct {
	session *mcp.ClientSession
	server  *mcp.ServerSession
	rt      *runtime.Runtime
}

// New serves contract, a compiled catalog in the JSON form of toolc build,
// with the handlers for its tools, and connects a client to it. The
// handlers serve every service of the contract, which in the generated
// test file is the one service. New fails t when the contract does not
// parse or the handlers miss one of its tools; t's cleanup closes the
// client and the server.
func New(t testing.TB, contract string, handlers ...plugins.Handler) *Client {
	t.Helper()
	c, err := connect(contract, handlers)
	if err != nil {
		t.Fatalf("toolctest: %v", err)
	}
	t.Cleanup(c.close)
	return c
}

func connect(contract string, handlers []plugins.Handler) (*Client, error) {
	cat, err := catalog.Parse([]byte(contract))
	if err != nil {
		return nil, err
	}
	dispatchers := map[string]runtime.Dispatcher{}
	for _, s := range cat.Services {
		dispatchers[s.Name] = runtime.Local(handlers...)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, dispatchers); err != nil {
		return nil, err
	}
	// The tools are in the server before the client connects: its first
	// tools/list has them, and nothing changes after.
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolctest"})
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		return nil, err
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "toolctest", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		ss.Close()
		return nil, err
	}
	return &Client{session: session, server: ss, rt: rt}, nil
}

func (c *Client) close() {
	c.session.Close()
	c.server.Close()
}

// Session is the go-sdk client session, for what Client does not wrap.
func (c *Client) Session() *mcp.ClientSession { return c.session }

// ListTools returns the tools as tools/list gives them to a model: MCP
// names, descriptions, input and output schemas, annotations.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for tool, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, tool)
	}
	return tools, nil
}

// Result is a tool's result as the client received it.
type Result struct {
	// Text is the text of the result's text blocks, one after another,
	// each ended by a newline but the last: what a model reads.
	Text string
	// StructuredContent is the result's structured content, nil when
	// there is none: for a tool with response fields, an object of them.
	StructuredContent json.RawMessage
	// IsError marks a tool error.
	IsError bool
	// MCP is the result whole, content blocks of every kind included.
	MCP *mcp.CallToolResult
}

// Decode decodes the structured content into v.
func (r *Result) Decode(v any) error {
	if r.StructuredContent == nil {
		return errors.New("the result has no structured content")
	}
	return json.Unmarshal(r.StructuredContent, v)
}

// A ToolError is a call whose result is a tool error (isError): invalid
// arguments, a handler that failed, or a response that breaks the
// contract. Message is what the model reads.
type ToolError struct {
	Tool    string // the name the call used
	Message string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %s: %s", e.Tool, e.Message)
}

// CallTool calls a tool with args, as a model would. name is the tool's
// name in the contract or its MCP name. args are the call's arguments: a
// string, []byte or json.RawMessage of JSON text, or a value that
// encodes as a JSON object, such as a map[string]any; nil is no
// arguments. A request struct of the generated code sends every field,
// zero values included, which is seldom what a model sends: a map says
// exactly which arguments the call has.
//
// A tool error is returned as a *ToolError, with the result; any other
// error (an unknown tool, arguments that are no JSON) with no result.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*Result, error) {
	raw, err := arguments(args)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %v", name, err)
	}
	mcpName := name
	if info, ok := c.rt.Snapshot().Lookup(name); ok {
		mcpName = info.MCPName
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName, Arguments: raw})
	if err != nil {
		return nil, err
	}
	out := &Result{IsError: res.IsError, MCP: res}
	var text []string
	for _, block := range res.Content {
		if t, ok := block.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	out.Text = strings.Join(text, "\n")
	if res.StructuredContent != nil {
		if out.StructuredContent, err = json.Marshal(res.StructuredContent); err != nil {
			return nil, err
		}
	}
	if res.IsError {
		return out, &ToolError{Tool: name, Message: out.Text}
	}
	return out, nil
}

// Call calls a tool with response fields and decodes them into a Resp:
// CallTool with a typed result. The generated client's methods call it.
func Call[Resp any](ctx context.Context, c *Client, name string, args any) (*Resp, error) {
	res, err := c.CallTool(ctx, name, args)
	if err != nil {
		return nil, err
	}
	resp := new(Resp)
	if err := res.Decode(resp); err != nil {
		return nil, fmt.Errorf("tool %s: %v", name, err)
	}
	return resp, nil
}

// arguments returns args as JSON text of an object.
func arguments(args any) (json.RawMessage, error) {
	var raw []byte
	switch a := args.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case string:
		raw = []byte(a)
	case []byte:
		raw = a
	case json.RawMessage:
		raw = a
	default:
		var err error
		if raw, err = json.Marshal(a); err != nil {
			return nil, fmt.Errorf("the arguments do not encode as JSON: %v", err)
		}
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("the arguments are not JSON: %.100q", raw)
	}
	return json.RawMessage(raw), nil
}
