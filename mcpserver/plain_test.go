package mcpserver

import (
	"encoding/json"
	"testing"
)

// TestPlainMessage: the messages of a well-behaved client are cleared by
// plainMessage, without findAmbiguous; the rest are left to it.
func TestPlainMessage(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"weather_query_weather","arguments":{"city":"Berlin","days":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`: true,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`:                                                                                                                                                               true,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:                                         true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"a":2}}}`: true, // the validator's to refuse
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"y"}}`:                false,
		`{"jsonrpc":"2.0","id":1,"ID":2}`:                                                                false,
		`[{"jsonrpc":"2.0","id":1}]`:                                                                     false,
		`{"jsonrpc":"2.0","id":1} x`:                                                                     false,
		`{"jsonrpc":"2.0","id":1,"a\u0062":1}`:                                                           false,
	} {
		if got := plainMessage([]byte(body)); got != want {
			t.Errorf("plainMessage(%s) = %t, want %t", body, got, want)
		}
	}
}

// FuzzPlainMessage holds plainMessage, the allocation-free pass that
// clears a plain message, to findAmbiguous: what it clears, ambiguousKey
// without it must find nothing wrong with either.
func FuzzPlainMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"a":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","NAME":"y"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1,{"b":[]}],"_meta":{"k":{"k":1}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"s"}}`,
		`{"id":1,"id":2}`, `{"Id":1,"id":2}`, `{"params":{"arguments":5,"arguments":6}}`,
		`{".params":{"name":1,"NAME":2}}`, `{"a":{"b":1,"B":2}}`, `{"a":[{"b":1,"b":2}]}`,
		`[{"id":1}]`, `{"a":"\"}"}`, `{"a\u0062":1,"ab":2}`, `{"params":{"argumentſ":1,"arguments":2}}`,
		`{"a":1} {"b":2}`, `{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		` {"a" : [ 1 , 2 ] , "b" : { } } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !plainMessage(data) {
			return
		}
		if problem, inParams, ok := findAmbiguous(data); ok {
			t.Errorf("plainMessage clears %s, where findAmbiguous finds %q (in params: %t)", data, problem, inParams)
		}
		if !json.Valid(data) {
			t.Errorf("plainMessage clears %s, which is not JSON", data)
		}
	})
}
