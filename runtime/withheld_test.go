package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/caller"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// TestWithheldToolSaysWhy: a tool the catalog leaves out as withheld is
// refused as an unknown tool, by function or MCP name, with why; a caller
// whose token may not see its service learns nothing of it, and a name
// nobody declared stays a plain unknown tool.
func TestWithheldToolSaysWhy(t *testing.T) {
	open := &catalog.Tool{Name: "open", Description: "Open", Request: catalog.Message{Fields: []*catalog.Field{}}}
	gone := &catalog.Tool{Name: "gone", Description: "Gone", Scopes: []string{"docs:read"}, Request: catalog.Message{Fields: []*catalog.Field{}}}
	full := &catalog.Service{Name: "docs", Version: "1.0.0", Description: "Docs", Scopes: []string{"docs:read"}, Tools: []*catalog.Tool{open, gone}}
	served := *full
	served.Tools = []*catalog.Tool{open}
	cat := &catalog.Catalog{Services: []*catalog.Service{&served}}
	cat.Seal()
	rt := runtime.New(runtime.Options{})
	d := runtime.Local(plugins.Handle("open", func(context.Context, json.RawMessage) (*plugins.Result, error) { return plugins.Text("ok"), nil }))
	if _, err := rt.SwapWithheld(cat, map[string]runtime.Dispatcher{"docs": d}, []runtime.Withheld{{Service: full, Tool: gone, Why: "the upstream changed it"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool string
		who        *caller.Caller
		why        bool
	}{
		{"function name", "gone", nil, true},
		{"MCP name", "docs_gone", nil, true},
		{"caller with the scope", "gone", &caller.Caller{Subject: "a", Scopes: []string{"docs:read"}}, true},
		{"caller without the service's scope", "gone", &caller.Caller{Subject: "b"}, false},
		{"undeclared", "other", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.who != nil {
				ctx = caller.With(ctx, tc.who)
			}
			_, err := rt.Call(ctx, tc.tool, json.RawMessage(`{}`))
			if !errors.Is(err, runtime.ErrUnknownTool) {
				t.Fatalf("call %s: %v, want an unknown tool", tc.tool, err)
			}
			var we *runtime.WithheldError
			if got := errors.As(err, &we); got != tc.why || strings.Contains(err.Error(), "upstream") != tc.why {
				t.Errorf("call %s: %q, want why told: %v", tc.tool, err, tc.why)
			}
		})
	}
	if _, err := rt.Call(context.Background(), "open", json.RawMessage(`{}`)); err != nil {
		t.Errorf("the served tool beside a withheld one: %v", err)
	}
	// A plain Swap forgets what was withheld.
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"docs": d}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Call(context.Background(), "gone", json.RawMessage(`{}`)); err == nil || strings.Contains(err.Error(), "withheld") {
		t.Errorf("after a plain swap: %v, want a plain unknown tool", err)
	}
}
