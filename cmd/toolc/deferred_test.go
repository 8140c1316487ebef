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
	"github.com/toolc/toolc/internal/doctext"
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

// serveShop compiles the shop in dir and serves it with echo handlers
// through the handler toolc serve mounts (MCP, /v1/tools, /v1/call).
func serveShop(t *testing.T, dir string) *httptest.Server {
	t.Helper()
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
	t.Cleanup(ts.Close)
	return ts
}

// postShopCall POSTs body to the server's /v1/call and returns the answer.
func postShopCall(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url+"/v1/call", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/call %s = %d %s", body, resp.StatusCode, out)
	}
	return string(out)
}

// TestDeferredToolsEndpointIsExport: for a catalog with deferred tools,
// GET /v1/tools?format=F (the handler toolc serve mounts) answers, byte
// for byte, what toolc export --format F prints, strict and not, in every
// target; and /v1/call reaches a deferred tool through toolc_search_tools
// and toolc_call_tool, the two tools that the projections without
// deferred loading of their own give a model.
func TestDeferredToolsEndpointIsExport(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/shop.cue": deferredShop})
	ts := serveShop(t, dir)
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
		var out callResponse
		if err := json.Unmarshal([]byte(postShopCall(t, ts.URL, string(body))), &out); err != nil {
			t.Fatalf("POST /v1/call %s: %v", name, err)
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

// TestDocsDeferredShop runs the example of docs/cli.md's "What each client
// sees" as printed: its contract is deferredShop; its toolc commands,
// run in a directory holding the contract as shop/shop.cue, print what
// it shows; and its /v1/call requests, sent to the shop served as toolc
// serve serves it, get the answers it shows (the toolc_call_tool one,
// which it leaves to the handler, reaches refund_payment).
func TestDocsDeferredShop(t *testing.T) {
	d := doctext.Read(t)
	block := func(marker string) doctext.Block {
		t.Helper()
		b, err := d.BlockAfter(marker)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := block("The shop above in full, as `shop/shop.cue`"); b.Text != deferredShop {
		t.Fatalf("%s: the shop is not deferredShop of cmd/toolc/deferred_test.go:\n%s", b.Path, b.Text)
	}
	dir := writeFiles(t, map[string]string{"shop/shop.cue": deferredShop})
	ts := serveShop(t, dir)

	// session splits a console block into its commands and what each
	// printed.
	type step struct{ cmd, out string }
	session := func(b doctext.Block) []step {
		var steps []step
		for _, line := range strings.SplitAfter(b.Text, "\n") {
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				steps = append(steps, step{cmd: strings.TrimSpace(cmd)})
			} else if len(steps) > 0 {
				steps[len(steps)-1].out += line
			}
		}
		if len(steps) == 0 {
			t.Fatalf("%s: no command", b.Path)
		}
		return steps
	}

	b := block("In the shop's directory:")
	for _, s := range session(b) {
		args := strings.Fields(s.cmd)
		if args[0] != "toolc" {
			t.Fatalf("%s: %q is not a toolc command", b.Path, s.cmd)
		}
		if r := toolc(t, dir, args[1:]...); r.status != 0 || r.stdout != s.out {
			t.Errorf("%s: %s = %d, printed\n%s\nwant\n%s\n%s", b.Path, s.cmd, r.status, r.stdout, s.out, r.stderr)
		}
	}

	b = block("calls what it found by name, with its arguments as a JSON object in a string:")
	steps := session(b)
	if len(steps) != 2 {
		t.Fatalf("%s: %d commands, want the search and the call", b.Path, len(steps))
	}
	for i, s := range steps {
		rest, ok := strings.CutPrefix(s.cmd, "curl -s localhost:8931/v1/call -d '")
		body, ok2 := strings.CutSuffix(rest, "'")
		if !ok || !ok2 {
			t.Fatalf("%s: %q is not a curl -s localhost:8931/v1/call -d 'BODY'", b.Path, s.cmd)
		}
		got := strings.TrimSuffix(postShopCall(t, ts.URL, body), "\n")
		switch i {
		case 0:
			if got != strings.TrimSuffix(s.out, "\n") {
				t.Errorf("%s: %s answered\n%s\nwant\n%s", b.Path, s.cmd, got, s.out)
			}
		case 1:
			if want := `{"content":[{"type":"text","text":"refund_payment {\"payment_id\":\"pay_1\"}"}],"isError":false}`; got != want {
				t.Errorf("%s: %s answered %s, want the handler's answer %s", b.Path, s.cmd, got, want)
			}
		}
	}
}
