package mcpserver

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeCases are messages, and things that are not, for decodeMessage
// against go-sdk's jsonrpc.DecodeMessage.
var decodeCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":-7,"method":""}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","ID":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":"r","error":{"code":-32600,"message":"no","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"no"}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a\u00e9\"b","params":"str"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	` {"jsonrpc":"2.0","id":1,"method":"ping"} `,
	`{"jsonrpc":"2.0","id":1,"method":"ping"} {"x":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","jsonrpc":"1.0"}`,
	`[]`, `"s"`, `null`, ``, `{`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 899) + strings.Repeat("]", 899) + `}`,
}

// sameDecoding fails unless decodeMessage reads data as go-sdk does.
func sameDecoding(t *testing.T, data string) {
	t.Helper()
	got, gotErr := decodeMessage([]byte(data))
	want, wantErr := jsonrpc.DecodeMessage([]byte(data))
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
		t.Errorf("%.200q:\ndecodeMessage: %#v, %v\ngo-sdk:        %#v, %v", data, got, gotErr, want, wantErr)
	}
}

func TestDecodeMessageIsGoSDK(t *testing.T) {
	for _, c := range decodeCases {
		sameDecoding(t, c)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, c := range decodeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data string) { sameDecoding(t, data) })
}
