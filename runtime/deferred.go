package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/caller"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/toolsearch"
	"github.com/toolc/toolc/validate"
)

// The runtime serves the two tools that reach a catalog's deferred tools
// where a target has no deferred loading of its own (see catalog/defer.go):
// catalog.SearchToolName finds deferred tools with toolsearch, and
// catalog.CallToolName calls a tool by name. They exist while the snapshot
// has a deferred tool, so MCP, /v1/call and toolcalls, which all call
// through Call, serve them alike.

// deferral is a snapshot's search over its deferred tools, built on the
// first search.
type deferral struct {
	once   sync.Once
	index  *toolsearch.Index
	mcp    map[string]catalog.MCPTool // the deferred tools, by MCP name
	search *validate.Validator
	call   *validate.Validator
}

// builtin returns the built-in tool that name calls, if the snapshot has
// deferred tools and name is one of them.
func (s *Snapshot) builtin(name string) *catalog.Tool {
	if !s.deferred {
		return nil
	}
	switch name {
	case catalog.SearchToolName:
		return catalog.SearchTool()
	case catalog.CallToolName:
		return catalog.CallTool()
	}
	return nil
}

// callBuiltin runs a built-in tool: its arguments are validated as any
// tool's, and its result is a tool result.
func (rt *Runtime) callBuiltin(ctx context.Context, snap *Snapshot, tool *catalog.Tool, args json.RawMessage, onEvent func(Event)) (*Result, error) {
	d := &snap.deferral
	d.once.Do(func() {
		deferred := &catalog.Catalog{Services: []*catalog.Service{}}
		for _, svc := range snap.Catalog.Services {
			cp := *svc
			cp.Tools = nil
			for _, t := range svc.Tools {
				if t.Deferred {
					cp.Tools = append(cp.Tools, t)
				}
			}
			deferred.Services = append(deferred.Services, &cp)
		}
		d.index = toolsearch.New(deferred)
		d.mcp = map[string]catalog.MCPTool{}
		for _, m := range snap.Catalog.MCPDeferredTools() {
			d.mcp[m.Name] = m
		}
		d.search, _ = validate.NewValidator(&catalog.SearchTool().Request)
		d.call, _ = validate.NewValidator(&catalog.CallTool().Request)
	})
	args, err := unwrapStringArguments(args)
	if err != nil {
		return toolError("%v", err), nil
	}
	v := d.search
	if tool.Name == catalog.CallToolName {
		v = d.call
	}
	args, verr := v.Validate(args)
	if verr != nil {
		return toolError("invalid arguments for tool %q: %v", tool.Name, verr), nil
	}
	var in map[string]any
	if err := json.Unmarshal(args, &in); err != nil {
		return toolError("invalid arguments for tool %q: %v", tool.Name, err), nil
	}
	if tool.Name == catalog.SearchToolName {
		return rt.searchDeferred(ctx, snap, in["query"].(string), int(in["limit"].(float64))), nil
	}
	name := in["name"].(string)
	if snap.builtin(name) != nil {
		return toolError("%s calls the catalog's tools, not %q", catalog.CallToolName, name), nil
	}
	return rt.CallWithEvents(ctx, name, json.RawMessage(in["arguments"].(string)), onEvent)
}

// foundTool is one tool that a search found, as its result lists it.
type foundTool struct {
	Name        string                 `json:"name"`
	MCPName     string                 `json:"mcpName"`
	Description string                 `json:"description"`
	Group       string                 `json:"group,omitempty"`
	InputSchema *catalog.ObjectSchema  `json:"inputSchema"`
	Meta        map[string]interface{} `json:"_meta,omitempty"`
}

// searchDeferred finds the deferred tools that best match the query, of
// those the caller may see, and returns them: their names (the function
// name, and the MCP name, which MCP's tools/call takes), descriptions and
// input schemas, as structured content and as text.
func (rt *Runtime) searchDeferred(ctx context.Context, snap *Snapshot, query string, limit int) *Result {
	c := caller.From(ctx)
	var found []foundTool
	for _, h := range snap.deferral.index.Search(query, 4*limit) {
		e := snap.byName[h.Tool]
		if e == nil || c != nil && AccessTo(c, e.ToolInfo) != Callable {
			continue
		}
		mcp := snap.deferral.mcp[e.MCPName]
		f := foundTool{Name: e.Tool.Name, MCPName: e.MCPName, Description: mcp.Description, Group: e.Tool.Group, InputSchema: mcp.InputSchema}
		if mcp.Meta != nil {
			f.Meta = map[string]any{catalog.MCPDeferLoadingKey: true}
			if len(mcp.Meta.Groups) > 0 {
				f.Meta[catalog.MCPGroupsKey] = mcp.Meta.Groups
			}
		}
		found = append(found, f)
		if len(found) == limit {
			break
		}
	}
	var b strings.Builder
	if len(found) == 0 {
		fmt.Fprintf(&b, "No tool matches %q; try other words.", query)
	}
	for i, f := range found {
		if i > 0 {
			b.WriteString("\n\n")
		}
		schema, _ := json.Marshal(f.InputSchema)
		fmt.Fprintf(&b, "%s (MCP name %s): %s\nInput schema: %s", f.Name, f.MCPName, f.Description, schema)
	}
	structured, _ := json.Marshal(map[string]any{"tools": found})
	var sc any
	_ = json.Unmarshal(structured, &sc)
	return &plugins.Result{Content: []plugins.Content{{Type: "text", Text: b.String()}}, StructuredContent: sc}
}
