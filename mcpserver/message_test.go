package mcpserver

import (
	"encoding/json"
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

// readBatch is go-sdk's reading of a POST body (its transport's
// readBatch), with encoding/json's trial of an array, which decodeMessages
// makes too: the reference decodeMessages is held to.
func readBatch(body []byte) (msgs []jsonrpc.Message, batch, ok bool) {
	var raw []json.RawMessage
	if json.Unmarshal(body, &raw) == nil {
		if len(raw) == 0 {
			return nil, true, false
		}
		for _, m := range raw {
			msg, err := jsonrpc.DecodeMessage(m)
			if err != nil {
				return nil, true, false
			}
			msgs = append(msgs, msg)
		}
		return msgs, true, true
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, false, false
	}
	return []jsonrpc.Message{msg}, false, true
}

// batchCases are bodies for decodeMessages beyond decodeCases: batches,
// and bodies that only look like one.
var batchCases = []string{
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	" \t\r\n[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"}]`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[1]`, `[null]`, ` null `, `nul`, `n`,
	"\ufeff[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	"\u00a0{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
}

func sameBatch(t *testing.T, body string) {
	t.Helper()
	gotMsgs, gotBatch, gotOK := decodeMessages([]byte(body))
	wantMsgs, wantBatch, wantOK := readBatch([]byte(body))
	if gotBatch != wantBatch || gotOK != wantOK || !reflect.DeepEqual(gotMsgs, wantMsgs) {
		t.Errorf("%.200q:\ndecodeMessages: %#v, batch %v, ok %v\ngo-sdk:         %#v, batch %v, ok %v", body, gotMsgs, gotBatch, gotOK, wantMsgs, wantBatch, wantOK)
	}
}

func TestDecodeMessagesIsGoSDK(t *testing.T) {
	for _, c := range append(decodeCases, batchCases...) {
		sameBatch(t, c)
	}
}

func FuzzDecodeMessages(f *testing.F) {
	for _, c := range append(decodeCases, batchCases...) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, body string) { sameBatch(t, body) })
}

// FuzzAppendResponse holds appendResponse to go-sdk's EncodeMessage, for
// any ID a client may send and any result encoding/json writes (the
// paths' results are all its output): here the JSON value in result,
// re-encoded as encoding/json encodes it, HTML escapes and all.
func FuzzAppendResponse(f *testing.F) {
	for _, c := range []struct {
		id     string
		result string
	}{
		{`7`, `{"content":[{"type":"text","text":"<b>&</b>"}],"isError":false}`},
		{`0`, `null`},
		{`-9223372036854775808`, `{}`},
		{`9223372036854775807`, `[1,2.5,"\u2028"]`},
		{`"a<b>&\u2028"`, `{"a":"b"}`},
		{`"\ud800"`, `"x"`},
		{`1.0`, `{}`},
		{`1e3`, `true`},
	} {
		f.Add(c.id, c.result)
	}
	f.Fuzz(func(t *testing.T, rawID, rawResult string) {
		var idv, resv any
		if json.Unmarshal([]byte(rawID), &idv) != nil || json.Unmarshal([]byte(rawResult), &resv) != nil {
			return
		}
		id, err := jsonrpc.MakeID(idv)
		if err != nil {
			return
		}
		result, err := json.Marshal(resv)
		if err != nil {
			return
		}
		for _, resp := range []*jsonrpc.Response{
			{ID: id, Result: result},
			{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: rawResult}},
		} {
			want, werr := jsonrpc.EncodeMessage(resp)
			got, gerr := appendResponse([]byte("prefix"), resp)
			if (werr != nil) != (gerr != nil) || werr == nil && string(got) != "prefix"+string(want) {
				t.Fatalf("id %s, result %s:\nappendResponse %q, %v\nEncodeMessage  %q, %v", rawID, rawResult, got, gerr, want, werr)
			}
		}
	})
}
