package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A legacy session keeps what its client tells it for as long as it lives
// (go-sdk's ServerSessionState): the initialize params, the params of
// notifications/initialized, and the logging level. With a client info of
// 1 MiB each of the 1000 sessions the cap allows kept 2 MiB, and as much
// with 1 MiB of _meta on notifications/initialized or a logging level of
// 1 MiB. A session needs of them only the protocol version, the
// capabilities (what the client can be asked), who the client is and a
// level, so slimSession hands go-sdk those alone:
//
//   - initialize: protocolVersion, capabilities and _meta, which must fit
//     in maxInitializeParams (real clients send well under 2 KiB), and the
//     client's name, title and version cut to maxClientInfoField bytes
//     each (no description, website or icons, which may be data URIs);
//     no other key;
//   - notifications/initialized: no params (it has only _meta);
//   - logging/setLevel: one of MCP's levels, or -32602.

// maxClientInfoField bounds each field of clientInfo that a session keeps.
const maxClientInfoField = 256

// maxInitializeParams bounds the rest of what a session keeps of its
// initialize: protocolVersion, capabilities and _meta, as JSON.
const maxInitializeParams = 16 << 10

// loggingLevels are MCP's logging levels (RFC 5424's).
var loggingLevels = map[string]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

// slimSession returns body with the params of each request in it that
// sets a session's state slimmed as above, or body itself when it has
// none; or, for params past the bounds, a problem to answer with -32602.
func slimSession(body []byte, msgs []jsonrpc.Message) (out []byte, problem string) {
	has := false
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && slimmed[req.Method] != nil {
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
		var method string
		if json.Unmarshal(e, &m) != nil || json.Unmarshal(m["method"], &method) != nil || slimmed[method] == nil {
			continue
		}
		params, problem := slimmed[method](m["params"])
		if problem != "" {
			return nil, problem
		}
		if params == nil {
			delete(m, "params")
		} else {
			m["params"] = params
		}
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

// slimmed are the methods whose params a session keeps, each with what
// slims them: it returns the params to hand go-sdk (nil for none), or a
// problem.
var slimmed = map[string]func(json.RawMessage) (json.RawMessage, string){
	"initialize":                slimInitializeParams,
	"notifications/initialized": func(json.RawMessage) (json.RawMessage, string) { return nil, "" },
	"logging/setLevel":          checkLevel,
}

// checkLevel refuses a logging/setLevel of a level MCP does not define:
// go-sdk keeps whatever string it is given.
func checkLevel(raw json.RawMessage) (json.RawMessage, string) {
	var p struct {
		Level string `json:"level"`
	}
	dec := fastjson.NewDecoder(bytes.NewReader(raw))
	dec.DontMatchCaseInsensitiveStructFields()
	if len(raw) == 0 || dec.Decode(&p) != nil || loggingLevels[p.Level] {
		return raw, "" // go-sdk refuses what it cannot decode
	}
	return nil, fmt.Sprintf("invalid params: unknown logging level %s; the levels are debug, info, notice, warning, error, critical, alert and emergency", quoteCut(p.Level))
}

// quoteCut quotes s cut to maxClientInfoField bytes.
func quoteCut(s string) string {
	if len(s) <= maxClientInfoField {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", cut(s), len(s))
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
