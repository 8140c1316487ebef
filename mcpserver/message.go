package mcpserver

import (
	"bytes"
	"encoding/json"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/jsondepth"
)

// The one reading of an MCP message. go-sdk decodes a POST body, or a line
// of stdio, with its own decoder (jsonrpc.DecodeMessage, and
// segmentio/encoding/json with keys matched exactly for params: "NAME" is
// not "name" to it, and of a key given twice it keeps the last). Every
// check toolc makes in front of go-sdk (the revision router, the scope
// check, the Mcp-Param-* headers, the error's id) reads the message here,
// with go-sdk's decoders, so that each judges the message go-sdk
// dispatches; and a message that readers could take for different ones (a
// key twice, or two keys that differ only in case) is refused before any
// of them reads it (see ambiguousKey).

// decodeMessages reads a body as go-sdk's HTTP transport does: a batch
// (a JSON array) of messages, or one message. ok is false when go-sdk
// would refuse it; it answers those itself.
func decodeMessages(body []byte) (msgs []jsonrpc.Message, batch, ok bool) {
	// go-sdk tries the body as an array first, which only a body that
	// opens with '[' (or is null, an empty batch) can be: anything else
	// fails that trial, and is not given it.
	var raw []json.RawMessage
	if c := firstByte(body); (c == '[' || c == 'n') && json.Unmarshal(body, &raw) == nil {
		if len(raw) == 0 {
			return nil, true, false
		}
		for _, m := range raw {
			msg, err := decodeMessage(m)
			if err != nil {
				return nil, true, false
			}
			msgs = append(msgs, msg)
		}
		return msgs, true, true
	}
	msg, err := decodeMessage(body)
	if err != nil {
		return nil, false, false
	}
	return []jsonrpc.Message{msg}, false, true
}

// firstByte is the first byte of data after the white space JSON allows,
// or 0.
func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

// decodeMessage is jsonrpc.DecodeMessage, go-sdk's reading of one message,
// without the two 32 KiB read buffers its decoder allocates (one for the
// message, one for its method): the same struct, tags and flag, read with
// segmentio's Parse, which is how a Decoder's Decode reads its first
// value; the same ID (jsonrpc.MakeID) and the same Request or Response.
// Whatever go-sdk's reading refuses, or might (nesting near its limit of
// 1000), is read by go-sdk's own function, for its own error.
// TestDecodeMessageIsGoSDK and FuzzDecodeMessage hold the two together.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if jsondepth.Of(data) > 900 {
		return jsonrpc.DecodeMessage(data)
	}
	var msg struct {
		VersionTag string          `json:"jsonrpc"`
		ID         any             `json:"id,omitempty"`
		Method     json.RawMessage `json:"method"`
		Params     json.RawMessage `json:"params,omitempty"`
		Result     json.RawMessage `json:"result,omitempty"`
		Error      *jsonrpc.Error  `json:"error,omitempty"`
	}
	if _, err := fastjson.Parse(data, &msg, fastjson.DontMatchCaseInsensitiveStructFields); err != nil || msg.VersionTag != "2.0" {
		return jsonrpc.DecodeMessage(data)
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return jsonrpc.DecodeMessage(data)
	}
	if len(msg.Method) > 0 {
		var method string
		if _, err := fastjson.Parse(msg.Method, &method, fastjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return jsonrpc.DecodeMessage(data)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: msg.Params}, nil
	}
	if !id.IsValid() {
		return jsonrpc.DecodeMessage(data)
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil {
		resp.Error = msg.Error
	}
	return resp, nil
}

// callParams returns the params of a tools/call request as go-sdk reads
// them for its server (mcp.CallToolParamsRaw, keys matched exactly), or
// false for any other message.
func callParams(msg jsonrpc.Message) (*mcp.CallToolParamsRaw, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" {
		return nil, false
	}
	p := new(mcp.CallToolParamsRaw)
	// What go-sdk's decoder does (a Decoder's Decode parses its first
	// value so), without the 32 KiB buffer a Decoder allocates to read.
	if len(req.Params) > 0 {
		if _, err := fastjson.Parse(req.Params, p, fastjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return nil, false
		}
	}
	return p, true
}

// plainParams are the params of a tools/call or tools/list that a direct
// path may answer, read once: as go-sdk reads them (keys matched exactly,
// the last of a key given twice), with each value left in the message. A
// request with any other key (a cursor, requestState, inputResponses, a
// task) is go-sdk's, and fails the reading.
type plainParams struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// readExactly decodes data, one JSON object, into v, a struct of raw
// values, and reports whether each of data's keys is one of v's, spelled
// exactly. It is one pass that copies nothing: the values stay in data,
// where a map of raw values copies each, and a key outside v's fails it
// at once.
func readExactly(data []byte, v any) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	const exactly = fastjson.DisallowUnknownFields | fastjson.DontMatchCaseInsensitiveStructFields | fastjson.DontCopyRawMessage
	rest, err := fastjson.Parse(data, v, exactly)
	return err == nil && len(rest) == 0
}

// call returns the params as callParams reads a tools/call's, with meta
// for its _meta, or false when the name is not a string.
func (p *plainParams) call(meta mcp.Meta) (*mcp.CallToolParamsRaw, bool) {
	var name string
	if _, err := fastjson.Parse(p.Name, &name, 0); err != nil {
		return nil, false
	}
	return &mcp.CallToolParamsRaw{Name: name, Arguments: p.Arguments, Meta: meta}, true
}

// idOf returns the id of a message, as go-sdk reads it (the key "id"
// exactly), when it is one that JSON-RPC allows (a string or a number),
// for the answer to a message refused before go-sdk reads it; else nil.
func idOf(data []byte) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	id := m["id"]
	if len(id) == 0 {
		return nil
	}
	if c := id[0]; c == '"' || c == '-' || c >= '0' && c <= '9' {
		return id
	}
	return nil
}
