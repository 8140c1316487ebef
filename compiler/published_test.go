package compiler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/bench/published"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/doctext"
)

// TestPublishedTools runs the rules against poisoned text over the tool
// definitions of published MCP servers (package bench/published), each
// server a service of one catalog, as `toolc serve` would serve them side
// by side. hidden-text is an error, so it must flag none of them: a false
// positive there would stop a faithful port. injected-instruction is a
// warning; its count on the corpus is in README.md, and this test keeps
// the two equal.
func TestPublishedTools(t *testing.T) {
	servers, err := published.Load()
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []*Package
	tools := 0
	for _, s := range servers {
		pkgs = append(pkgs, &Package{Dir: "/published/" + s.Package, Name: "published", root: publishedService(t, s)})
		tools += len(s.Tools)
	}
	counts := map[string]int{}
	flagged := map[string]map[string]bool{}
	for _, r := range []*Rule{hiddenTextRule, injectedInstructionRule} {
		var ds []diag.Diagnostic
		r.Check(&Pass{rule: r, packages: pkgs, diags: &ds})
		counts[r.ID] = len(ds)
		flagged[r.ID] = map[string]bool{}
		for _, d := range ds {
			t.Logf("%s: %s", r.ID, d.Message)
			// The service and tool: "text at tools.NAME...".
			_, rest, _ := strings.Cut(d.Message, "tools.")
			name, _, _ := strings.Cut(rest, ".")
			flagged[r.ID][name] = true
		}
	}
	if counts["hidden-text"] != 0 {
		t.Errorf("hidden-text flags %d strings of published tools; an error rule must flag none", counts["hidden-text"])
	}
	want := fmt.Sprintf("On %d tools of %d published MCP servers, `hidden-text` flags none and `injected-instruction` warns %d times, on %d tools",
		tools, len(servers), counts["injected-instruction"], len(flagged["injected-instruction"]))
	if !strings.Contains(doctext.Read(t).All(), want) {
		t.Errorf("neither README.md nor docs/*.md says %q", want)
	}
}

// publishedService turns a published server into the nodes the rules walk:
// a service whose tools have the published names (pinned as their MCP
// names too), descriptions and titles, and whose request fields are the
// input schema's properties, key for key, nested ones included.
func publishedService(t *testing.T, s published.Server) *node {
	name := strings.NewReplacer("@", "", "/", "-").Replace(s.Package)
	tools := &node{label: "tools", path: "tools", kind: kStruct}
	for _, tl := range s.Tools {
		var schema map[string]any
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
			t.Fatalf("%s: tool %s: %v", s.Package, tl.Name, err)
		}
		path := "tools." + tl.Name
		tn := &node{label: tl.Name, path: path, kind: kStruct}
		add := func(label string, v any) {
			tn.fields = append(tn.fields, jsonNode(label, path+"."+label, v))
		}
		add("description", tl.Description)
		if tl.Title != "" {
			add("title", tl.Title)
		}
		if raw, ok := tl.Rest["annotations"]; ok {
			var a map[string]any
			if json.Unmarshal(raw, &a) == nil {
				if title, ok := a["title"].(string); ok {
					add("title", title)
				}
			}
		}
		req := map[string]any{"fields": schema["properties"]}
		if d, ok := schema["description"]; ok {
			req["description"] = d
		}
		add("request", req)
		add("mcp", map[string]any{"name": tl.Name})
		tools.fields = append(tools.fields, tn)
	}
	return &node{kind: kStruct, fields: []*node{
		{label: "name", path: "name", kind: kString, str: name},
		tools,
	}}
}

// jsonNode converts a decoded JSON value into nodes, keys sorted.
func jsonNode(label, path string, v any) *node {
	n := &node{label: label, path: path}
	switch v := v.(type) {
	case string:
		n.kind, n.str = kString, v
	case float64:
		n.kind, n.f = kFloat, v
	case bool:
		n.kind, n.b = kBool, v
	case nil:
		n.kind = kNull
	case []any:
		n.kind = kList
		for i, e := range v {
			n.elems = append(n.elems, jsonNode(fmt.Sprint(i), fmt.Sprintf("%s[%d]", path, i), e))
		}
	case map[string]any:
		n.kind = kStruct
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			n.fields = append(n.fields, jsonNode(k, path+"."+k, v[k]))
		}
	}
	return n
}
