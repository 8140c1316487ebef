package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/runtime"
)

// TestWithheldToolSaysWhy: a tools/call of a tool the runtime withholds
// (an upstream tool that drifted from its contract) is an unknown tool's
// error that says why, at both revisions, where go-sdk alone would say
// only "unknown tool".
func TestWithheldToolSaysWhy(t *testing.T) {
	full := testCatalog()
	svc := full.Services[0]
	var ping *catalog.Tool
	var keep []string
	for _, tl := range full.ToolNames() {
		if tl == "ping" {
			continue
		}
		keep = append(keep, tl)
	}
	for _, tl := range svc.Tools {
		if tl.Name == "ping" {
			ping = tl
		}
	}
	cat, err := full.Select(keep...)
	if err != nil {
		t.Fatal(err)
	}
	cat.Seal()
	rt := runtime.New(runtime.Options{})
	if _, err := rt.SwapWithheld(cat, testDispatchers(&ran{}), []runtime.Withheld{{Service: svc, Tool: ping, Why: "the upstream server of service \"svc\" changed this tool"}}); err != nil {
		t.Fatal(err)
	}
	ts := serveMCP(t, rt, HTTPOptions{})
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) {
			session := connect(t, ts.URL, revision, nil)
			_, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "svc_ping", Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), `unknown tool "svc_ping": withheld: the upstream server of service "svc" changed this tool`) {
				t.Errorf("call of a withheld tool: %v", err)
			}
			_, err = session.CallTool(context.Background(), &mcp.CallToolParams{Name: "svc_nothing", Arguments: map[string]any{}})
			if err == nil || strings.Contains(err.Error(), "withheld") || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("call of an undeclared tool: %v", err)
			}
		})
	}
}
