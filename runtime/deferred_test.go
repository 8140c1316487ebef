package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// names answers each of its tools with the tool's name and arguments.
type names []string

func (n names) Tools() []string { return n }

func (n names) Call(_ context.Context, tool, _ string, args json.RawMessage, _ func(runtime.Event)) (*runtime.Result, error) {
	return &runtime.Result{Content: []plugins.Content{{Type: "text", Text: tool + " " + string(args)}}}, nil
}

func deferredRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	str := func(name, desc string) []*catalog.Field {
		return []*catalog.Field{{Name: name, Type: catalog.String, Description: desc, Required: true}}
	}
	c := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "shop", Version: "1.0.0", Description: "A shop",
		Groups: []*catalog.Group{{Name: "billing", Description: "Invoices", Deferred: true}},
		Tools: []*catalog.Tool{
			{Name: "ping", Description: "Check that the shop answers", Request: catalog.Message{Fields: []*catalog.Field{}}},
			{Name: "create_invoice", Group: "billing", Deferred: true, Description: "Create an invoice for an order", Request: catalog.Message{Fields: str("order_id", "The order to bill")}},
			{Name: "refund_payment", Group: "billing", Deferred: true, Description: "Refund a payment", Request: catalog.Message{Fields: str("payment_id", "The payment")}},
		},
	}, {
		Name: "vault", Version: "1.0.0", Description: "A guarded service", Scopes: []string{"vault:use"},
		Tools: []*catalog.Tool{
			{Name: "open_vault_invoice", Deferred: true, Scopes: []string{"vault:use"}, Description: "Open the invoice vault", Request: catalog.Message{Fields: []*catalog.Field{}}},
		},
	}}}
	c.Seal()
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(c, map[string]runtime.Dispatcher{"shop": names{"ping", "create_invoice", "refund_payment"}, "vault": names{"open_vault_invoice"}}); err != nil {
		t.Fatal(err)
	}
	return rt
}

func searchNames(t *testing.T, res *runtime.Result) []string {
	t.Helper()
	data, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Tools []struct{ Name, MCPName string }
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, tl := range out.Tools {
		s = append(s, tl.Name+"/"+tl.MCPName)
	}
	return s
}

func TestDeferredTools(t *testing.T) {
	rt := deferredRuntime(t)
	ctx := context.Background()
	call := func(ctx context.Context, name, args string) *runtime.Result {
		t.Helper()
		res, err := rt.Call(ctx, name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("Call(%s, %s): %v", name, args, err)
		}
		return res
	}

	res := call(ctx, catalog.SearchToolName, `{"query":"bill an order"}`)
	if got := searchNames(t, res); len(got) == 0 || got[0] != "create_invoice/shop_create_invoice" || res.IsError {
		t.Errorf("search for billing: %v (%+v)", got, res)
	}
	if !strings.Contains(res.Content[0].Text, "create_invoice (MCP name shop_create_invoice): Create an invoice for an order\nInput schema: {") {
		t.Errorf("search text: %q", res.Content[0].Text)
	}
	// Only deferred tools are searched, and limit holds.
	if got := searchNames(t, call(ctx, catalog.SearchToolName, `{"query":"check shop answers invoice payment","limit":1}`)); len(got) != 1 || strings.HasPrefix(got[0], "ping") {
		t.Errorf("search with limit 1: %v", got)
	}
	if res := call(ctx, catalog.SearchToolName, `{"query":"weather"}`); len(searchNames(t, res)) != 0 || !strings.Contains(res.Content[0].Text, "No tool matches") {
		t.Errorf("search for nothing: %+v", res)
	}
	// A caller without vault:use learns nothing of the vault.
	bob := oauth.WithCaller(ctx, &oauth.Caller{Subject: "bob"})
	if got := searchNames(t, call(bob, catalog.SearchToolName, `{"query":"open invoice vault"}`)); strings.Contains(strings.Join(got, " "), "vault") {
		t.Errorf("search without vault:use found %v", got)
	}
	if got := searchNames(t, call(ctx, catalog.SearchToolName, `{"query":"open invoice vault"}`)); len(got) == 0 || got[0] != "open_vault_invoice/vault_open_vault_invoice" {
		t.Errorf("search with no OAuth: %v", got)
	}

	// The call tool calls a tool by name, with its arguments in a string.
	if res := call(ctx, catalog.CallToolName, `{"name":"refund_payment","arguments":"{\"payment_id\":\"p1\"}"}`); res.IsError || res.Content[0].Text != `refund_payment {"payment_id":"p1"}` {
		t.Errorf("call refund_payment: %+v", res)
	}
	for args, want := range map[string]string{
		`{"name":"refund_payment","arguments":"{}"}`:                "invalid arguments for refund_payment",
		`{"name":"toolc_call_tool","arguments":"{}"}`:               "toolc_call_tool calls the catalog's tools, not \"toolc_call_tool\"",
		`{"arguments":"{}"}`:                                        "invalid arguments for tool \"toolc_call_tool\"",
		`{"name":"refund_payment","arguments":{"payment_id":"p1"}}`: "invalid arguments for tool \"toolc_call_tool\"",
	} {
		if res := call(ctx, catalog.CallToolName, args); !res.IsError || !strings.Contains(res.Content[0].Text, want) {
			t.Errorf("call %s: %+v, want a tool error with %q", args, res, want)
		}
	}
	if _, err := rt.Call(ctx, catalog.CallToolName, json.RawMessage(`{"name":"nope","arguments":"{}"}`)); !errors.Is(err, runtime.ErrUnknownTool) {
		t.Errorf("call of an unknown tool: %v", err)
	}
	if res := call(ctx, catalog.SearchToolName, `{"query":""}`); !res.IsError {
		t.Errorf("an empty query: %+v", res)
	}

	// Without deferred tools, there are no such tools.
	plain := runtime.New(runtime.Options{})
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "shop", Version: "1.0.0", Description: "A shop", Tools: []*catalog.Tool{
		{Name: "ping", Description: "Check", Request: catalog.Message{Fields: []*catalog.Field{}}},
	}}}}
	c.Seal()
	if _, err := plain.Swap(c, map[string]runtime.Dispatcher{"shop": names{"ping"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Call(ctx, catalog.SearchToolName, json.RawMessage(`{"query":"x"}`)); !errors.Is(err, runtime.ErrUnknownTool) {
		t.Errorf("search without deferred tools: %v", err)
	}
}
