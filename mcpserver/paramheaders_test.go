package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestParamHeadersHoldTheHandlersArguments: a 2026-07-28 tools/call's
// Mcp-Param-* headers are held to the arguments the handler runs with,
// however the arguments are spelled: as an object or as the JSON string
// that holds one (the OpenAI form), with escapes, with null for an
// optional argument, with a default the handler gets, with an integer
// written 1.0 or 1e0. A header that disagrees, is missing for an argument
// given, or is there (even empty) for one not given, is 400 and -32020,
// and the handler does not run.
func TestParamHeadersHoldTheHandlersArguments(t *testing.T) {
	var r ran
	rt := testRuntime(t, &r)
	ts := serveMCP(t, rt, HTTPOptions{})
	name := mcpNameOf(t, rt, "route")
	for _, tc := range []struct {
		name    string
		args    string // the JSON of params.arguments
		headers []string
		// ran is the arguments the handler must run with, "" for none:
		// then the answer must be 400 and -32020, unless toolErr says the
		// arguments are invalid (a tool error, and no handler either).
		ran     string
		toolErr bool
	}{
		{"object", `{"region":"us"}`, []string{"Mcp-Param-Region", "us"}, `{"region":"us","zone":"z1"}`, false},
		{"object, header disagrees", `{"region":"us"}`, []string{"Mcp-Param-Region", "eu"}, "", false},
		{"string form", `"{\"region\":\"us\"}"`, []string{"Mcp-Param-Region", "us"}, `{"region":"us","zone":"z1"}`, false},
		{"string form, header disagrees", `"{\"region\":\"us\"}"`, []string{"Mcp-Param-Region", "eu"}, "", false},
		{"string form, no header", `"{\"region\":\"us\"}"`, nil, "", false},
		{"string form with white space", ` "{\"region\":\"us\"}" `, []string{"Mcp-Param-Region", "eu"}, "", false},
		{"string form, escaped key", `"{\"\\u0072egion\":\"us\"}"`, []string{"Mcp-Param-Region", "eu"}, "", false},
		{"escaped value", `{"region":"\u0065u"}`, []string{"Mcp-Param-Region", "eu"}, `{"region":"\u0065u","zone":"z1"}`, false},
		{"header of the escape", `{"region":"\u0065u"}`, []string{"Mcp-Param-Region", `\u0065u`}, "", false},
		{"base64", `"{\"region\":\"Zürich\"}"`, []string{"Mcp-Param-Region", "=?base64?WsO8cmljaA==?="}, `{"region":"Zürich","zone":"z1"}`, false},
		{"base64 of another", `"{\"region\":\"Zürich\"}"`, []string{"Mcp-Param-Region", "=?base64?QmVybg==?="}, "", false},
		{"integer 1.0", `"{\"region\":\"eu\",\"tenant\":1.0}"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "1"}, `{"region":"eu","tenant":1,"zone":"z1"}`, false},
		{"integer 1e0, header 2", `"{\"region\":\"eu\",\"tenant\":1e0}"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "2"}, "", false},
		{"integer header 1.0", `{"region":"eu","tenant":1}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "1.0"}, `{"region":"eu","tenant":1,"zone":"z1"}`, false},
		{"integer header in hexadecimal", `{"region":"eu","tenant":1}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "0x1p0"}, "", false},
		{"integer header +1", `{"region":"eu","tenant":1}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "+1"}, "", false},
		{"boolean", `"{\"region\":\"eu\",\"dry_run\":true}"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Dry-Run", "true"}, `{"region":"eu","dry_run":true,"zone":"z1"}`, false},
		{"boolean header True", `{"region":"eu","dry_run":true}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Dry-Run", "True"}, "", false},
		{"null optional, header given", `"{\"region\":\"eu\",\"tenant\":null}"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", "1"}, "", false},
		{"null optional, no header", `"{\"region\":\"eu\",\"tenant\":null}"`, []string{"Mcp-Param-Region", "eu"}, `{"region":"eu","zone":"z1"}`, false},
		{"empty header, argument absent", `{"region":"eu"}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Tenant", ""}, "", false},
		{"empty header, argument empty", `{"region":""}`, []string{"Mcp-Param-Region", ""}, "", false},
		{"empty string as base64", `{"region":""}`, []string{"Mcp-Param-Region", "=?base64??="}, `{"region":"","zone":"z1"}`, false},
		{"default, no header", `{"region":"eu"}`, []string{"Mcp-Param-Region", "eu"}, `{"region":"eu","zone":"z1"}`, false},
		{"default, header of another zone", `{"region":"eu"}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "z9"}, "", false},
		{"default, header of the default", `"{\"region\":\"eu\"}"`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "z1"}, "", false},
		{"header twice", `{"region":"eu"}`, []string{"Mcp-Param-Region", "eu", "Mcp-Param-Region", "eu"}, "", false},
		{"string form, key twice", `"{\"region\":\"eu\",\"region\":\"us\"}"`, []string{"Mcp-Param-Region", "eu"}, "", true},
		{"string form, key in capitals", `"{\"region\":\"eu\",\"REGION\":\"us\"}"`, []string{"Mcp-Param-Region", "eu"}, "", true},
	} {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + tc.args + `,"_meta":` + meta2026 + `}}`
		a := postMCP(t, ts.URL, body, header2026("tools/call", name, tc.headers...))
		got := r.take()
		switch {
		case tc.ran != "":
			if a.status != 200 || a.Error != nil || a.Result["isError"] == true || !slices.Equal(got, []string{"route " + tc.ran}) {
				t.Errorf("%s: %d %s; ran %q, want it to run with %s", tc.name, a.status, a.raw, got, tc.ran)
			}
		case len(got) > 0:
			t.Errorf("%s: the handler ran with %q (%d %s)", tc.name, got, a.status, a.raw)
		case tc.toolErr:
			if a.status != 200 || a.Result["isError"] != true {
				t.Errorf("%s: %d %s, want a tool error", tc.name, a.status, a.raw)
			}
		case a.status != 400 || a.Error == nil || a.Error.Code != mcp.CodeHeaderMismatch || string(a.ID) != "7":
			t.Errorf("%s: %d %s, want 400 and -32020 for id 7", tc.name, a.status, a.raw)
		}
	}
}

// TestParamHeadersRealClients: go-sdk's client at 2026-07-28 sends the
// headers of object arguments itself, and none for arguments in the string
// form; a header a gateway added that disagrees with the arguments is
// refused, whatever their form, and in a legacy session too, whose client
// sends no such headers but whose requests are held to any they carry.
func TestParamHeadersRealClients(t *testing.T) {
	var r ran
	rt := testRuntime(t, &r)
	ts := serveMCP(t, rt, HTTPOptions{})
	name := mcpNameOf(t, rt, "route")
	var inject []string // header pairs added to the client's requests
	gateway := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		for i := 0; i+1 < len(inject); i += 2 {
			req.Header.Set(inject[i], inject[i+1])
		}
		return http.DefaultTransport.RoundTrip(req)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, revision := range []string{"2026-07-28", "2025-11-25"} {
		session := connect(t, ts.URL, revision, gateway)
		if _, err := session.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name   string
			args   any
			inject []string
			ok     bool
		}{
			{"object", map[string]any{"region": "us"}, nil, true},
			{"object, a header says eu", map[string]any{"region": "us"}, []string{"Mcp-Param-Region", "eu"}, false},
			{"string form, a header says eu", `{"region":"us"}`, []string{"Mcp-Param-Region", "eu"}, false},
			{"string form, a header for an absent argument", `{"region":"us"}`, []string{"Mcp-Param-Region", "us", "Mcp-Param-Tenant", ""}, false},
		} {
			inject = tc.inject
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: tc.args})
			got := r.take()
			var rpcErr *jsonrpc.Error
			switch {
			case tc.ok && (err != nil || res.IsError || len(got) != 1 || !strings.Contains(got[0], `"us"`)):
				t.Errorf("%s, %s: %v %+v; ran %q", revision, tc.name, err, res, got)
			case !tc.ok && len(got) > 0:
				t.Errorf("%s, %s: the handler ran with %q", revision, tc.name, got)
			case !tc.ok && (!errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeHeaderMismatch):
				t.Errorf("%s, %s: %v %+v, want HeaderMismatch (-32020)", revision, tc.name, err, res)
			}
		}
		inject = nil
	}
}
