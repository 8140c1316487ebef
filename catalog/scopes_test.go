package catalog_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
)

// TestScopes: a tool's scopes are in the catalog file and its
// fingerprint, survive a round trip, and reach the MCP projection's _meta
// in a form go-sdk's mcp.Tool reads back.
func TestScopes(t *testing.T) {
	make := func(scopes ...string) *catalog.Catalog {
		c := &catalog.Catalog{Services: []*catalog.Service{{
			Name: "orders", Version: "1.0.0", Description: "Orders", Handler: ".",
			Tools: []*catalog.Tool{{
				Name: "cancel_order", Description: "Cancel an order", Scopes: scopes,
				Request: catalog.Message{Fields: []*catalog.Field{}},
			}},
		}}}
		c.Seal()
		return c
	}
	open, guarded := make(), make("orders:read", "orders:write")
	if open.Services[0].Tools[0].Fingerprint == guarded.Services[0].Tools[0].Fingerprint {
		t.Error("a tool's fingerprint does not cover its scopes")
	}
	data, err := guarded.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"scopes":["orders:read","orders:write"]`)) {
		t.Errorf("the catalog file has no scopes:\n%s", data)
	}
	parsed, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := parsed.Services[0].Tools[0].Scopes; !slices.Equal(got, []string{"orders:read", "orders:write"}) {
		t.Errorf("scopes after Parse = %q", got)
	}
	// A hand edit of a scope is caught, like any edit a caller depends on.
	if _, err := catalog.Parse(bytes.Replace(data, []byte(`"orders:write"`), []byte(`"orders:any"`), 1)); err == nil {
		t.Error("Parse accepts a catalog whose scopes were edited by hand")
	}

	proj, err := guarded.ProjectJSON(catalog.MCP, catalog.ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := indentJSON(t, guarded.MCPTools()); !bytes.Equal(proj, want) {
		t.Errorf("ProjectJSON and encoding/json of MCPTools differ:\n%s\n%s", proj, want)
	}
	var tools []mcp.Tool
	if err := json.Unmarshal(proj, &tools); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(tools[0].Meta[catalog.MCPScopesKey])
	if string(got) != `["orders:read","orders:write"]` {
		t.Errorf("_meta[%q] = %s; projection:\n%s", catalog.MCPScopesKey, got, proj)
	}
	if again, _ := json.Marshal(tools[0]); jsonDiff(bytes.TrimSpace(proj[1:len(proj)-2]), again) != "" {
		t.Errorf("mcp.Tool does not re-encode the tool as projected:\n%s\n%s", proj, again)
	}
	// Without scopes there is no _meta at all.
	plain, _ := open.ProjectJSON(catalog.MCP, catalog.ProjectOptions{})
	if bytes.Contains(plain, []byte("_meta")) {
		t.Errorf("a tool without scopes has a _meta:\n%s", plain)
	}
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestServiceScopes: a service's own scopes, which decide whether a caller
// may learn of its tools, survive a round trip, and a hand edit of them is
// caught.
func TestServiceScopes(t *testing.T) {
	c := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "orders", Version: "1.0.0", Description: "Orders", Handler: ".", Scopes: []string{"orders:read"},
		Tools: []*catalog.Tool{{
			Name: "cancel_order", Description: "Cancel an order", Scopes: []string{"orders:read", "orders:write"},
			Request: catalog.Message{Fields: []*catalog.Field{}},
		}},
	}}}
	c.Seal()
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := parsed.Services[0].Scopes; !slices.Equal(got, []string{"orders:read"}) {
		t.Errorf("service scopes after Parse = %q\n%s", got, data)
	}
	edited := bytes.Replace(data, []byte(`"scopes":["orders:read"],"tools"`), []byte(`"scopes":["orders:any"],"tools"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("no service scopes to edit in:\n%s", data)
	}
	if _, err := catalog.Parse(edited); err == nil {
		t.Error("Parse accepts a catalog whose service scopes were edited by hand")
	}
}
