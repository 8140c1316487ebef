package compiler_test

import (
	"reflect"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
)

// TestLowerUpstream: the upstream block reaches the catalog whole, env and
// headers in name order, and a service with one gets no handler warning.
func TestLowerUpstream(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"docs/docs.cue": []byte(`package docs

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name: "docs", version: "1.0.0", description: "Docs"
	upstream: {
		command: ["npx", "-y", "@acme/docs-mcp@1.4.0"]
		dir: "work"
		env: {Z_TOKEN: {env: "DOCS_TOKEN"}, A_CA: {file: "ca.pem", prefix: "pem:"}}
		callTimeout: "1m"
	}
	tools: "get-doc": {description: "Get a doc", request: fields: {}, mcp: name: "getDoc"}
}
`),
		"docs/lib.go": []byte("package docs\n"), // not a main package: no warning for an upstream service
		"wiki/wiki.cue": []byte(`package wiki

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name: "wiki", version: "1.0.0", description: "Wiki"
	upstream: {url: "https://wiki.internal/mcp", headers: Authorization: {env: "WIKI_TOKEN", prefix: "Bearer "}}
	tools: search: {description: "Search", request: fields: {}}
}
`),
	})
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("unexpected diagnostic: %s %s [%s]", d.Pos, d.Message, d.Rule)
	}
	want := map[string]*catalog.Upstream{
		"docs": {Command: []string{"npx", "-y", "@acme/docs-mcp@1.4.0"}, Dir: "work", CallTimeout: "1m",
			Env: []catalog.ValueFrom{{Name: "A_CA", File: "ca.pem", Prefix: "pem:"}, {Name: "Z_TOKEN", Env: "DOCS_TOKEN"}}},
		"wiki": {URL: "https://wiki.internal/mcp", Headers: []catalog.ValueFrom{{Name: "Authorization", Env: "WIKI_TOKEN", Prefix: "Bearer "}}},
	}
	for _, svc := range res.Catalog.Services {
		if !reflect.DeepEqual(svc.Upstream, want[svc.Name]) {
			t.Errorf("service %s: upstream %+v, want %+v", svc.Name, svc.Upstream, want[svc.Name])
		}
	}
	if len(res.Catalog.Services) != 2 {
		t.Errorf("%d services, want 2", len(res.Catalog.Services))
	}
}
