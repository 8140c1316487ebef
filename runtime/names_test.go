package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// namedHandler answers with the name of its tool, so that a test sees which
// tool a call ran.
type namedHandler string

func (h namedHandler) Tool() string { return string(h) }

func (h namedHandler) Call(context.Context, json.RawMessage) (*plugins.Result, error) {
	return plugins.Text(string(h)), nil
}

// TestSwapRefusesAmbiguousNames holds a catalog that did not come through
// the compiler (a hand-edited catalog file, say) to unique-name and
// mcp-name: a name that a client can call, function name or MCP name, must
// lead to one tool, or a call meant for one tool runs another. Swap refuses
// such a catalog and keeps serving the one before.
func TestSwapRefusesAmbiguousNames(t *testing.T) {
	tool := func(name, mcpName string) *catalog.Tool {
		return &catalog.Tool{Name: name, MCPName: mcpName, Description: "A tool"}
	}
	svc := func(name string, tools ...*catalog.Tool) *catalog.Service {
		return &catalog.Service{Name: name, Version: "1.0.0", Description: "A service", Tools: tools}
	}
	for _, tc := range []struct {
		name     string
		services []*catalog.Service
		want     string // "" for a catalog that Swap takes
	}{
		{"distinct names", []*catalog.Service{svc("files", tool("delete_all", "")), svc("notes", tool("read", ""))}, ""},
		{"a tool's pinned MCP name is its own function name", []*catalog.Service{svc("files", tool("delete_all", "delete_all"))}, ""},
		{
			// Issue 20, item 3: "files_delete_all" is the MCP name of
			// files' delete_all and the function name of a tool of notes.
			"a function name is another tool's derived MCP name",
			[]*catalog.Service{svc("files", tool("delete_all", "")), svc("notes", tool("files_delete_all", ""))},
			`tool "delete_all" of service "files" (MCP name "files_delete_all") and tool "files_delete_all" of service "notes" (MCP name "notes_files_delete_all") can both be called as "files_delete_all"`,
		},
		{
			"a pinned MCP name is another tool's function name",
			[]*catalog.Service{svc("files", tool("delete_all", "")), svc("notes", tool("read", "delete_all"))},
			`tool "delete_all" of service "files" (MCP name "files_delete_all") and tool "read" of service "notes" (MCP name "delete_all") can both be called as "delete_all"`,
		},
		{
			"two pinned MCP names",
			[]*catalog.Service{svc("files", tool("delete_all", "wipe")), svc("notes", tool("read", "wipe"))},
			`can both be called as "wipe"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtime.New(runtime.Options{})
			cat := &catalog.Catalog{Services: tc.services}
			cat.Seal()
			dispatchers := map[string]runtime.Dispatcher{}
			for _, s := range cat.Services {
				var hs []plugins.Handler
				for _, tl := range s.Tools {
					hs = append(hs, namedHandler(tl.Name))
				}
				dispatchers[s.Name] = runtime.Local(hs...)
			}
			before := rt.Snapshot()
			_, err := rt.Swap(cat, dispatchers)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Swap: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "must be unique across the catalog") {
				t.Fatalf("Swap = %v; want an error saying %s", err, tc.want)
			}
			if rt.Snapshot() != before {
				t.Error("a refused Swap replaced the snapshot")
			}
		})
	}
}

// TestMessagesNameTheToolAsCalled holds every message a client reads about
// a call to the name the client called: a port keeps Notion's MCP name
// API-get-user for a tool whose key is api-get-user, and a client that
// called API-get-user was told "invalid arguments for api-get-user", a
// name it never saw. Over MCP the name is the MCP name, over /v1 and in
// Go whichever of the two the caller used.
func TestMessagesNameTheToolAsCalled(t *testing.T) {
	tool := func(name string, response bool) *catalog.Tool {
		tl := &catalog.Tool{Name: name, MCPName: strings.ToUpper(name[:3]) + name[3:], Description: "A tool", Scopes: []string{"users:read"},
			Request: catalog.Message{Fields: []*catalog.Field{{Name: "id", Type: catalog.String, Description: "User ID", Required: true}}}}
		if response {
			tl.Response = &catalog.Message{Fields: []*catalog.Field{{Name: "name", Type: catalog.String, Description: "Name", Required: true}}}
		}
		return tl
	}
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "notion", Version: "1.0.0", Description: "Notion",
		Tools: []*catalog.Tool{tool("api-get-user", false), tool("api-fail", false), tool("api-slow", false), tool("api-bad-result", true)}}}}
	cat.Seal()
	handlers := []plugins.Handler{
		namedHandler("api-get-user"),
		namedHandler("api-fail"),
		plugins.Handle("api-slow", func(ctx context.Context, _ struct{ ID string }) (*plugins.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		plugins.Handle("api-bad-result", func(context.Context, struct{ ID string }) (*plugins.Result, error) {
			return plugins.Text("no structured content"), nil
		}),
	}
	rt := runtime.New(runtime.Options{CallTimeout: 50 * time.Millisecond})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"notion": crashing{runtime.Local(handlers...), "api-fail"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		called, args, want string
	}{
		{"API-get-user", `{}`, "invalid arguments for API-get-user: "},
		{"api-get-user", `{}`, "invalid arguments for api-get-user: "},
		{"API-get-user", `{"id":"u1","extra":1}`, "invalid arguments for API-get-user: "},
		{"API-fail", `{"id":"u1"}`, "the handler of API-fail failed: upstream refused"},
		{"API-slow", `{"id":"u1"}`, "API-slow did not finish within 50ms"},
		{"API-bad-result", `{"id":"u1"}`, "the handler of API-bad-result returned no structured content"},
	} {
		t.Run(tc.called+tc.args, func(t *testing.T) {
			res := runtimetest.Call(t, rt, tc.called, tc.args)
			runtimetest.WantToolError(t, res, tc.want)
			other := strings.ToLower(tc.called)
			if other == tc.called {
				other = strings.ToUpper(tc.called[:3]) + tc.called[3:]
			}
			if strings.Contains(runtimetest.Text(res), other) {
				t.Errorf("tool error %q names the tool %q, not %q as called", runtimetest.Text(res), other, tc.called)
			}
		})
	}

	// A caller whose token lacks the tool's scope is told which scopes the
	// tool needs, under the name it called.
	ctx := oauth.WithCaller(context.Background(), &oauth.Caller{Subject: "bob", Scopes: []string{"pages:read"}})
	for _, called := range []string{"API-get-user", "api-get-user"} {
		_, err := rt.Call(ctx, called, json.RawMessage(`{"id":"u1"}`))
		var scope *runtime.InsufficientScopeError
		if !errors.As(err, &scope) || scope.Tool != called || !strings.Contains(err.Error(), strconv.Quote(called)) {
			t.Errorf("Call(%s) without the scope: %v, want an InsufficientScopeError naming %q", called, err, called)
		}
	}
}

// crashing is a dispatcher whose handler of one tool cannot answer, as a
// plugin that crashed.
type crashing struct {
	runtime.Dispatcher
	tool string
}

func (c crashing) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(runtime.Event)) (*runtime.Result, error) {
	if tool == c.tool {
		return nil, errors.New("upstream refused")
	}
	return c.Dispatcher.Call(ctx, tool, callID, args, onEvent)
}
