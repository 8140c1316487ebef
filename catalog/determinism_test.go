package catalog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// A contract of two files, and the same contract with both files renamed
// and every declaration inside them reordered: tools, fields, keys of a
// field, annotations, and which file declares which tool.
var (
	contractA = map[string]string{
		"svc/service.cue": `package svc

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "orders"
	version:     "1.0.0"
	description: "Place and find orders"

	tools: place_order: {
		description: "Place an order"
		annotations: {readOnly: false, idempotent: false}
		request: fields: {
			sku: {type: "string", description: "Stock keeping unit", minLength: 3, pattern: "^[A-Z0-9-]+$"}
			quantity: {type: "integer", description: "How many", required: false, default: 1, minimum: 1, maximum: 99}
			gift: {type: "boolean", description: "Wrap it", required: false}
		}
		response: fields: id: {type: "string", description: "Order ID", format: "uuid"}
		examples: [{sku: "ABC-1"}, {sku: "XYZ-2", quantity: 3}]
	}
}
`,
		"svc/find.cue": `package svc

tools: find_orders: {
	description: "Find orders"
	annotations: readOnly: true
	request: {
		description: "Filters"
		fields: {
			status: {type: "string", description: "Order status", required: false, enum: ["open", "shipped"], default: "open"}
			tags: {type: "array", items: "string", description: "Tags", required: false, maxItems: 5, uniqueItems: true}
			limit: {type: "integer", description: "Page size", required: false, minimum: 1, maximum: 50}
		}
	}
}

tools: cancel_order: {
	description: "Cancel an order"
	strict:      true
	request: fields: id: {type: "string", description: "Order ID", format: "uuid"}
}
`,
	}
	contractB = map[string]string{
		"svc/b_orders.cue": `package svc

import "github.com/toolc/toolc/schema"

schema.#Service & {
	description: "Place and find orders"
	version:     "1.0.0"
	name:        "orders"

	tools: place_order: {
		examples: [{sku: "ABC-1"}, {quantity: 3, sku: "XYZ-2"}]
		response: fields: id: {format: "uuid", type: "string", description: "Order ID"}
		request: fields: {
			sku: {pattern: "^[A-Z0-9-]+$", minLength: 3, description: "Stock keeping unit", type: "string"}
			quantity: {maximum: 99, minimum: 1, default: 1, required: false, description: "How many", type: "integer"}
			gift: {required: false, description: "Wrap it", type: "boolean"}
		}
		annotations: {idempotent: false, readOnly: false}
		description: "Place an order"
	}
}
`,
		"svc/a_find_and_cancel.cue": `package svc

tools: find_orders: {
	request: {
		fields: {
			status: {default: "open", enum: ["open", "shipped"], required: false, description: "Order status", type: "string"}
			tags: {uniqueItems: true, maxItems: 5, required: false, description: "Tags", items: "string", type: "array"}
			limit: {maximum: 50, minimum: 1, required: false, description: "Page size", type: "integer"}
		}
		description: "Filters"
	}
	annotations: readOnly: true
	description: "Find orders"
}

tools: cancel_order: {
	request: fields: id: {format: "uuid", description: "Order ID", type: "string"}
	strict:      true
	description: "Cancel an order"
}
`,
	}
	// contractC is contractA with the fields of find_orders declared in
	// another order: a change that models see (they read, and OpenAI's
	// strict mode generates, properties in schema order).
	contractC = map[string]string{
		"svc/service.cue": contractA["svc/service.cue"],
		"svc/find.cue": strings.Replace(strings.Replace(contractA["svc/find.cue"], `			limit: {type: "integer", description: "Page size", required: false, minimum: 1, maximum: 50}
`, "", 1), "fields: {\n", "fields: {\n\t\t\tlimit: {type: \"integer\", description: \"Page size\", required: false, minimum: 1, maximum: 50}\n", 1),
	}
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func buildTree(t *testing.T, dir string) *catalog.Catalog {
	t.Helper()
	c, err := compileDir(dir, "./...")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withoutPositions returns the catalog file with every source position
// blanked.
func withoutPositions(t *testing.T, c *catalog.Catalog) []byte {
	t.Helper()
	data := marshal(t, c)
	cp, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cp.Services {
		s.Pos = catalog.Pos{}
		for _, tl := range s.Tools {
			tl.Pos = catalog.Pos{}
			msgs := []*catalog.Message{&tl.Request}
			if tl.Response != nil {
				msgs = append(msgs, tl.Response)
			}
			for _, m := range msgs {
				m.Pos = catalog.Pos{}
				for _, f := range m.Fields {
					f.Pos = catalog.Pos{}
				}
			}
		}
	}
	return marshal(t, cp)
}

// TestDeterminism: building the same contract twice, or in another
// directory, gives the same bytes. Renaming its files and reordering the
// keys of each declaration gives the same fingerprints and the same
// projections; the order of the fields is the contract's (see
// TestDeclarationOrder). The catalog files then differ only in their "pos" entries,
// which say where each declaration now is: that is the one legitimate
// difference, so the files are compared with positions blanked.
func TestDeterminism(t *testing.T) {
	a1 := buildTree(t, writeTree(t, contractA))
	a2 := buildTree(t, writeTree(t, contractA))
	b := buildTree(t, writeTree(t, contractB))

	if n := len(a1.ToolNames()); n != 3 {
		t.Fatalf("the contract compiled to %d tools, want 3: %v", n, a1.ToolNames())
	}
	if !bytes.Equal(marshal(t, a1), marshal(t, a2)) {
		t.Errorf("two builds differ:\n%s", lineDiff(string(marshal(t, a1)), string(marshal(t, a2))))
	}

	if a1.Fingerprint != b.Fingerprint {
		t.Errorf("catalog fingerprint %s after renaming and reordering, was %s", b.Fingerprint, a1.Fingerprint)
	}
	for i, s := range a1.Services {
		for j, tl := range s.Tools {
			if got := b.Services[i].Tools[j]; got.Name != tl.Name || got.Fingerprint != tl.Fingerprint {
				t.Errorf("tool %s %s became %s %s", tl.Name, tl.Fingerprint, got.Name, got.Fingerprint)
			}
		}
	}
	for _, target := range catalog.Targets() {
		for _, m := range modes {
			pa, err := a1.ProjectJSON(target, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			pb, _ := b.ProjectJSON(target, m.opts)
			if !bytes.Equal(pa, pb) {
				t.Errorf("%s%s projection differs after renaming and reordering:\n%s", target, m.suffix, lineDiff(string(pa), string(pb)))
			}
		}
	}
	if bytes.Equal(marshal(t, a1), marshal(t, b)) {
		t.Error("the catalog files are equal although the declarations moved: are positions still recorded?")
	}
	if pa, pb := withoutPositions(t, a1), withoutPositions(t, b); !bytes.Equal(pa, pb) {
		t.Errorf("with positions blanked, the catalog files differ:\n%s", lineDiff(string(pa), string(pb)))
	}
}

// TestFingerprintSensitivity: every change to what a tool is changes its
// fingerprint and the catalog's; a change elsewhere leaves other tools'
// fingerprints alone.
func TestFingerprintSensitivity(t *testing.T) {
	base := kitchenSink()
	edits := map[string]func(c *catalog.Catalog){
		"tool description": func(c *catalog.Catalog) { c.Services[0].Tools[0].Description += "!" },
		"field required":   func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[0].Required = true },
		"enum value":       func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[2].Enum[0] = int64(7) },
		"example":          func(c *catalog.Catalog) { c.Services[0].Tools[0].Examples[0]["name"] = "y" },
		"annotation":       func(c *catalog.Catalog) { c.Services[0].Tools[0].Annotations.OpenWorld = new(bool) },
		"response":         func(c *catalog.Catalog) { c.Services[0].Tools[0].Response = nil },
		"mcp name":         func(c *catalog.Catalog) { c.Services[0].Tools[0].MCPName = "" },
		"group":            func(c *catalog.Catalog) { c.Services[0].Tools[0].Group = "g" },
		"deferred":         func(c *catalog.Catalog) { c.Services[0].Tools[0].Deferred = true },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			c := kitchenSink()
			edit(c)
			c.Seal()
			if c.Services[0].Tools[0].Fingerprint == base.Services[0].Tools[0].Fingerprint {
				t.Error("the tool's fingerprint did not change")
			}
			if c.Fingerprint == base.Fingerprint {
				t.Error("the catalog's fingerprint did not change")
			}
			if c.Services[0].Tools[1].Fingerprint != base.Services[0].Tools[1].Fingerprint {
				t.Error("another tool's fingerprint changed")
			}
		})
	}
	t.Run("service version", func(t *testing.T) {
		c := kitchenSink()
		c.Services[0].Version = "0.2.0"
		c.Seal()
		if c.Fingerprint == base.Fingerprint {
			t.Error("the catalog's fingerprint did not change")
		}
		if c.Services[0].Tools[0].Fingerprint != base.Services[0].Tools[0].Fingerprint {
			t.Error("a tool's fingerprint covers its service's version")
		}
	})
	t.Run("positions", func(t *testing.T) {
		c := kitchenSink()
		c.Services[0].Pos.Line++
		c.Services[0].Tools[0].Request.Fields[1].Pos = catalog.Pos{File: "elsewhere.cue", Line: 1, Column: 1}
		c.Seal()
		if c.Fingerprint != base.Fingerprint || c.Services[0].Tools[0].Fingerprint != base.Services[0].Tools[0].Fingerprint {
			t.Error("moving a declaration changed a fingerprint")
		}
	})
}

// TestDeclarationOrder: fields keep the order the contract declares them
// in, in the catalog and in every projection; declaring them in another
// order changes the tool's fingerprint, because models see it.
func TestDeclarationOrder(t *testing.T) {
	a := buildTree(t, writeTree(t, contractA))
	c := buildTree(t, writeTree(t, contractC))
	find := func(cat *catalog.Catalog) *catalog.Tool {
		for _, tl := range cat.Services[0].Tools {
			if tl.Name == "find_orders" {
				return tl
			}
		}
		t.Fatal("no find_orders")
		return nil
	}
	names := func(tl *catalog.Tool) string {
		var ns []string
		for _, f := range tl.Request.Fields {
			ns = append(ns, f.Name)
		}
		return strings.Join(ns, ",")
	}
	if got := names(find(a)); got != "status,tags,limit" {
		t.Errorf("fields of find_orders are %s, want the declared status,tags,limit", got)
	}
	if got := names(find(c)); got != "limit,status,tags" {
		t.Errorf("fields of find_orders are %s, want the declared limit,status,tags", got)
	}
	if find(a).Fingerprint == find(c).Fingerprint {
		t.Error("reordering the fields left the tool's fingerprint alone")
	}
	for _, target := range catalog.Targets() {
		for _, m := range modes {
			for _, cat := range []*catalog.Catalog{a, c} {
				want := names(find(cat))
				pj, err := cat.ProjectJSON(target, m.opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := propertyOrder(t, pj, "find_orders", target); got != want {
					t.Errorf("%s%s: ProjectJSON's properties are %s, want %s", target, m.suffix, got, want)
				}
				pv, err := json.Marshal(project(cat, target, m.opts))
				if err != nil {
					t.Fatal(err)
				}
				if got := propertyOrder(t, pv, "find_orders", target); got != want {
					t.Errorf("%s%s: the typed projection's properties are %s, want %s", target, m.suffix, got, want)
				}
			}
		}
	}
}

// propertyOrder returns the keys of the properties of the tool's input
// schema in a projection, in the order the JSON text has them.
func propertyOrder(t *testing.T, proj []byte, tool string, target catalog.Target) string {
	t.Helper()
	i := bytes.Index(proj, []byte(tool+`"`)) // MCP names end in it
	if i < 0 {
		t.Fatalf("no %s in %s", tool, proj)
	}
	if target == catalog.MCP {
		// An MCP tool's name follows its inputSchema, as go-sdk sends it.
		i = bytes.LastIndex(proj[:i], []byte(`"inputSchema":`))
	}
	j := bytes.Index(proj[i:], []byte(`"properties":`))
	dec := json.NewDecoder(bytes.NewReader(proj[i+j+len(`"properties":`):]))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			if depth == 0 {
				return strings.Join(keys, ",")
			}
			continue
		}
		if k, ok := tok.(string); ok && depth == 1 {
			keys = append(keys, k)
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
	}
}
