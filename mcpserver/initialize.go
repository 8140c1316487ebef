package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A legacy session keeps its client's initialize params for as long as it
// lives (go-sdk's ServerSessionState): with a client info of 1 MiB, each of
// the 1000 sessions the cap allows kept 2 MiB. A session needs of them
// only the protocol version, the capabilities (what the client can be
// asked) and who the client is, so slimInitialize hands go-sdk those
// alone: the client's name, title and version cut to maxClientInfoField
// bytes each (no description, website or icons, which may be data URIs),
// and no other key. The rest must fit in maxInitializeParams, or the
// initialize is refused: real clients send well under 2 KiB.

// maxClientInfoField bounds each field of clientInfo that a session keeps.
const maxClientInfoField = 256

// maxInitializeParams bounds the rest of what a session keeps of its
// initialize: protocolVersion, capabilities and _meta, as JSON.
const maxInitializeParams = 16 << 10

// slimInitialize returns body with the params of each initialize request
// in it slimmed as above, or body itself when it has none; or, for params
// over the bound, a problem to answer with -32602.
func slimInitialize(body []byte, msgs []jsonrpc.Message) (out []byte, problem string) {
	has := false
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" {
			has = true
		}
	}
	if !has {
		return body, ""
	}
	batch := bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("["))
	var elems []json.RawMessage
	if batch {
		if json.Unmarshal(body, &elems) != nil {
			return body, ""
		}
	} else {
		elems = []json.RawMessage{body}
	}
	for i, e := range elems {
		var m map[string]json.RawMessage
		if json.Unmarshal(e, &m) != nil || string(m["method"]) != `"initialize"` {
			continue
		}
		params, problem := slimInitializeParams(m["params"])
		if problem != "" {
			return nil, problem
		}
		m["params"] = params
		if elems[i], problem = marshal(m); problem != "" {
			return nil, problem
		}
	}
	if !batch {
		return elems[0], ""
	}
	out, problem = marshal(elems)
	return out, problem
}

func marshal(v any) ([]byte, string) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, "invalid params: " + err.Error()
	}
	return b, ""
}

// slimInitializeParams keeps of initialize params what a session needs.
func slimInitializeParams(raw json.RawMessage) (json.RawMessage, string) {
	var p map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || p == nil {
		return raw, "" // go-sdk refuses params that are no object
	}
	slim := map[string]json.RawMessage{}
	size := 0
	for _, k := range []string{"protocolVersion", "capabilities", "_meta"} {
		if v, ok := p[k]; ok {
			slim[k] = v
			size += len(v)
		}
	}
	if size > maxInitializeParams {
		return nil, fmt.Sprintf("invalid params: the initialize params (protocolVersion, capabilities and _meta) are %d bytes; a session keeps at most %d", size, maxInitializeParams)
	}
	if info, ok := p["clientInfo"]; ok {
		var ci struct {
			Name    string `json:"name"`
			Title   string `json:"title,omitempty"`
			Version string `json:"version"`
		}
		// go-sdk's decoding: keys matched exactly.
		dec := fastjson.NewDecoder(bytes.NewReader(info))
		dec.DontMatchCaseInsensitiveStructFields()
		if dec.Decode(&ci) != nil {
			return raw, "" // go-sdk refuses it
		}
		ci.Name, ci.Title, ci.Version = cut(ci.Name), cut(ci.Title), cut(ci.Version)
		b, _ := json.Marshal(ci)
		slim["clientInfo"] = b
	}
	b, _ := json.Marshal(slim)
	return b, ""
}

// cut cuts s to maxClientInfoField bytes, at a character's start.
func cut(s string) string {
	if len(s) <= maxClientInfoField {
		return s
	}
	return strings.ToValidUTF8(s[:maxClientInfoField], "")
}
