package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// deferredShop is a service with a deferred group, a tool deferred in a
// loaded group, and tools loaded up front.
const deferredShop = `package shop

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "shop"
	version:     "1.0.0"
	description: "A small shop"
	groups: {
		billing: {description: "Invoices, payments and refunds", defer: true}
		catalog: {description: "Products and prices"}
	}
	tools: create_invoice: {
		group:       "billing"
		description: "Create an invoice for an order"
		request: fields: order_id: {type: "string", description: "The order to bill", minLength: 1}
	}
	tools: refund_payment: {
		group:       "billing"
		description: "Refund a payment, in full or in part"
		request: fields: {
			payment_id: {type: "string", description: "The payment"}
			amount: {type: "integer", description: "Cents to refund; all of it when left out", required: false, minimum: 1}
		}
	}
	tools: find_products: {
		group:       "catalog"
		description: "Find products by name"
		request: fields: q: {type: "string", description: "Search words", minLength: 1}
	}
	tools: price_history: {
		group:       "catalog"
		defer:       true
		description: "The price history of a product"
		request: fields: sku: {type: "string", description: "The product's SKU"}
	}
	tools: ping: {
		description: "Answer pong"
		request: fields: {}
	}
}
`

// shopEcho answers every tool of the shop with its name and arguments.
type shopEcho struct{}

func (shopEcho) Tools() []string {
	return []string{"create_invoice", "refund_payment", "find_products", "price_history", "ping"}
}

func (shopEcho) Call(_ context.Context, tool, _ string, args json.RawMessage, _ func(runtime.Event)) (*runtime.Result, error) {
	return plugins.NewResult(plugins.TextContent(tool + " " + string(args))), nil
}

// TestDeferredToolsEndpointIsExport: for a catalog with deferred tools,
// GET /v1/tools?format=F (the handler toolc serve mounts) answers, byte
// for byte, what toolc export --format F prints, strict and not, in every
// target; and /v1/call reaches a deferred tool through toolc_search_tools
// and toolc_call_tool, the two tools that the projections without
// deferred loading of their own give a model.
func TestDeferredToolsEndpointIsExport(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/shop.cue": deferredShop})
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil || res.HasErrors() {
		t.Fatal(err, res.Diagnostics)
	}
	if !res.Catalog.HasDeferred() {
		t.Fatal("the catalog has no deferred tool")
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"shop": shopEcho{}}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{}), httpapi.Options{}))
	defer ts.Close()
	get := func(query string) string {
		t.Helper()
		resp, err := http.Get(ts.URL + "/v1/tools?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/tools?%s = %d %s", query, resp.StatusCode, body)
		}
		return string(body)
	}

	for _, target := range targets {
		for _, strict := range []bool{false, true} {
			args, query := []string{"export", "--format", target}, "format="+target
			if strict {
				args, query = append(args, "--strict"), query+"&strict=1"
			}
			r := toolc(t, dir, args...)
			if r.status != 0 {
				t.Fatalf("toolc %s = %d\n%s", strings.Join(args, " "), r.status, r.stderr)
			}
			if got := get(query); got != r.stdout {
				t.Errorf("GET /v1/tools?%s differs from toolc %s:\n got %s\nwant %s", query, strings.Join(args, " "), got, r.stdout)
			}
			// The deferred tools' names are in the projections with
			// deferred loading, and only there.
			native := target == "anthropic" || target == "openai-responses"
			if strings.Contains(r.stdout, `"price_history"`) != native || strings.Contains(r.stdout, "create_invoice") != native {
				t.Errorf("toolc %s: deferred tools named %v, want %v:\n%s", strings.Join(args, " "), !native, native, r.stdout)
			}
		}
	}

	// A model of a target without deferred loading searches, then calls
	// what it found, over /v1/call.
	type callResponse struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	call := func(name string, args any) callResponse {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
		resp, err := http.Post(ts.URL+"/v1/call", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out callResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /v1/call %s = %d, %v", name, resp.StatusCode, err)
		}
		return out
	}
	found := call("toolc_search_tools", map[string]any{"query": "refund a payment", "limit": 1})
	if found.IsError || len(found.Content) != 1 || !strings.HasPrefix(found.Content[0].Text, "refund_payment (MCP name shop_refund_payment): ") {
		t.Errorf("toolc_search_tools: %+v", found)
	}
	got := call("toolc_call_tool", map[string]any{"name": "refund_payment", "arguments": `{"payment_id": "pay_1"}`})
	if got.IsError || len(got.Content) != 1 || got.Content[0].Text != `refund_payment {"payment_id":"pay_1"}` {
		t.Errorf("toolc_call_tool refund_payment: %+v", got)
	}
}
