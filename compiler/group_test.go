package compiler_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolc/toolc/compiler"
)

// TestLowerGroups: groups and defer reach the catalog, a tool's defer
// overriding its group's.
func TestLowerGroups(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `package shop

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "shop"
	version:     "1.0.0"
	description: "A shop"
	groups: {
		billing: {description: "Invoices", defer: true}
		catalog: {description: "Products"}
	}
	tools: invoice: {group: "billing", description: "Create an invoice", request: fields: {}}
	tools: refund: {group: "billing", defer: false, description: "Refund a payment", request: fields: {}}
	tools: find: {group: "catalog", description: "Find products", request: fields: {}}
	tools: prices: {group: "catalog", defer: true, description: "Price history", request: fields: {}}
	tools: ping: {description: "Answer", request: fields: {}}
}
`
	if err := os.WriteFile(filepath.Join(dir, "shop", "shop.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		if d.Rule != "provider-limit" {
			t.Errorf("unexpected %s", d)
		}
	}
	s := res.Catalog.Services[0]
	if len(s.Groups) != 2 || s.Groups[0].Name != "billing" || !s.Groups[0].Deferred || s.Groups[0].Description != "Invoices" || s.Groups[1].Deferred {
		t.Errorf("groups %+v %+v", s.Groups[0], s.Groups[1])
	}
	want := map[string][2]any{"invoice": {"billing", true}, "refund": {"billing", false}, "find": {"catalog", false}, "prices": {"catalog", true}, "ping": {"", false}}
	for _, tl := range s.Tools {
		if w := want[tl.Name]; tl.Group != w[0] || tl.Deferred != w[1] {
			t.Errorf("tool %s: group %q deferred %v, want %v", tl.Name, tl.Group, tl.Deferred, w)
		}
	}
}
