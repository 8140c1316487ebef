package toolctest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/toolctest"
)

func ptr[T any](v T) *T { return &v }

// contract is a compiled catalog, as toolc build writes it: greet has a
// required name, an optional times with default 2, and a response; ping
// has no response fields.
func contract(t *testing.T) string {
	t.Helper()
	cat := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "greeter", Version: "1.0.0", Description: "Greetings", Dir: ".", Handler: ".",
		Tools: []*catalog.Tool{
			{
				Name: "greet", Description: "Greet someone",
				Request: catalog.Message{Fields: []*catalog.Field{
					{Name: "name", Type: catalog.String, Description: "Who", Required: true, MinLength: ptr[int64](1)},
					{Name: "times", Type: catalog.Integer, Description: "How often", Default: int64(2), Minimum: ptr(1.0), Maximum: ptr(5.0)},
				}},
				Response: &catalog.Message{Fields: []*catalog.Field{
					{Name: "text", Type: catalog.String, Description: "The greeting", Required: true},
				}},
			},
			{Name: "ping", Description: "Answer pong", Request: catalog.Message{Fields: []*catalog.Field{}}},
		},
	}}}
	data, err := cat.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

type greetRequest struct {
	Name  string `json:"name"`
	Times int    `json:"times"`
}

type greetResponse struct {
	Text string `json:"text"`
}

// handlers answer greet with the name as often as asked, except for
// "nobody", whose response breaks the contract (no text), and "error",
// which fails.
func handlers() []plugins.Handler {
	return []plugins.Handler{
		plugins.Handle("greet", func(_ context.Context, req greetRequest) (*plugins.Result, error) {
			switch req.Name {
			case "nobody":
				return plugins.JSON(map[string]any{})
			case "error":
				return nil, errors.New("no greeting today")
			}
			return plugins.JSON(greetResponse{strings.TrimSpace(strings.Repeat("hello "+req.Name+" ", req.Times))})
		}),
		plugins.Handle("ping", func(context.Context, struct{}) (*plugins.Result, error) {
			return plugins.Text("pong"), nil
		}),
	}
}

// TestCall: a call goes through the contract as a model's would: the
// default reaches the handler, invalid arguments and a response that
// breaks the contract are tool errors the handler never caused or the
// test would otherwise miss, and the typed result decodes.
func TestCall(t *testing.T) {
	c := toolctest.New(t, contract(t), handlers()...)
	ctx := t.Context()

	resp, err := toolctest.Call[greetResponse](ctx, c, "greet", map[string]any{"name": "Ada"})
	if err != nil || resp.Text != "hello Ada hello Ada" {
		t.Errorf("greet Ada = %+v, %v; want the default of 2 applied", resp, err)
	}
	for _, args := range []any{`{"name":"Ada","times":1}`, []byte(`{"name":"Ada","times":1}`), greetRequest{"Ada", 1}} {
		if resp, err := toolctest.Call[greetResponse](ctx, c, "greet", args); err != nil || resp.Text != "hello Ada" {
			t.Errorf("greet %T = %+v, %v", args, resp, err)
		}
	}

	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "name"},                           // missing, refused before the handler
		{map[string]any{"name": "Ada", "times": 9}, "times"}, // out of bounds
		{map[string]any{"name": "Ada", "extra": 1}, "extra"}, // unknown
		{greetRequest{Name: "Ada"}, "times"},                 // a struct sends times: 0
		{map[string]any{"name": "nobody"}, "text"},           // the response lacks a required field
		{map[string]any{"name": "error"}, "no greeting today"},
	} {
		res, err := c.CallTool(ctx, "greet", tc.args)
		var te *toolctest.ToolError
		if !errors.As(err, &te) || !strings.Contains(te.Message, tc.want) || res == nil || !res.IsError {
			t.Errorf("greet %v = %+v, %v; want a tool error about %q", tc.args, res, err, tc.want)
		}
	}

	res, err := c.CallTool(ctx, "ping", nil)
	if err != nil || res.Text != "pong" || res.StructuredContent != nil {
		t.Errorf("ping = %+v, %v; want the text pong and no structured content", res, err)
	}
	// The MCP name a model sees calls the same tool.
	if res, err := c.CallTool(ctx, "greeter_ping", nil); err != nil || res.Text != "pong" {
		t.Errorf("greeter_ping = %+v, %v", res, err)
	}
	if _, err := c.CallTool(ctx, "nope", nil); err == nil || errors.As(err, new(*toolctest.ToolError)) {
		t.Errorf("an unknown tool = %v; want a protocol error, not a tool error", err)
	}
	if _, err := c.CallTool(ctx, "ping", "{not json"); err == nil {
		t.Error("arguments that are no JSON were sent")
	}
}

// TestListTools: the list is what a model's client sees, MCP names and
// schemas with the contract's default.
func TestListTools(t *testing.T) {
	c := toolctest.New(t, contract(t), handlers()...)
	tools, err := c.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if fmt.Sprint(names) != "[greeter_greet greeter_ping]" {
		t.Errorf("tools %v, want the MCP names", names)
	}
	if schema := fmt.Sprint(tools[0].InputSchema); !strings.Contains(schema, "default:2") {
		t.Errorf("greet's input schema %s lacks the default", schema)
	}
	if tools[0].OutputSchema == nil {
		t.Error("greet has no output schema")
	}
}

// fatalTB records a Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	panic(f)
}

// TestNewFails: a contract that does not parse, or handlers that miss a
// tool, fail the test with the reason.
func TestNewFails(t *testing.T) {
	for _, tc := range []struct {
		name, contract string
		handlers       []plugins.Handler
		want           string
	}{
		{"corrupt contract", `{"format":"toolc.catalog/v1"`, handlers(), "catalog"},
		{"missing handler", contract(t), handlers()[:1], "lacks tools ping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			func() {
				defer func() {
					if r := recover(); r != nil && r != any(tb) {
						panic(r)
					}
				}()
				toolctest.New(tb, tc.contract, tc.handlers...)
			}()
			if !strings.Contains(tb.msg, tc.want) {
				t.Errorf("New failed with %q, want %q", tb.msg, tc.want)
			}
		})
	}
}
