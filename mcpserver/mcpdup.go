package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolc/toolc/internal/httpjson"
)

// rejectDuplicateKeys answers 400 and a JSON-RPC error to an MCP POST
// whose body repeats a key in any object: -32602 (invalid params) when the
// object is inside params, -32600 (invalid request) otherwise. go-sdk
// decodes with encoding/json, which keeps the last of two "name" keys,
// while a gateway or log in front may read the first: a tools/call of
// {"name": "allowed", "name": "other"} would pass an allowlist and run
// "other". /v1/call refuses the same for its envelope (see
// newEnvelopeValidator). A tool's arguments are left to the argument
// validator, which go-sdk hands them to as they were sent and which makes
// a repeated argument a tool error that the model reads. A body that is
// not JSON is go-sdk's to refuse. Waits for go-sdk: a decoder that refuses
// a repeated key.
func rejectDuplicateKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readMCPBody(w, r)
		if !ok {
			return
		}
		if problem, inParams, ok := duplicateKey(body); ok {
			code, what := -32600, "request"
			if inParams {
				code, what = -32602, "params"
			}
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(body, &msg)
			if len(msg.ID) == 0 {
				msg.ID = json.RawMessage("null")
			}
			httpjson.Write(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{
				"code": code, "message": fmt.Sprintf("invalid %s: %s", what, problem),
			}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// mcpBody is an MCP POST body read whole and put back for the handlers
// after (go-sdk reads it as the body): the revision router and the error
// answers take its bytes from here instead of reading and copying it again.
type mcpBody struct {
	*bytes.Reader
	data []byte

	// The body's messages, as go-sdk reads them (decodeMessages), once
	// decoded.
	decoded   bool
	msgs      []jsonrpc.Message
	batch, ok bool
}

// messages returns the body's messages (decodeMessages), decoding them on
// first use: the checks of one request share one reading.
func (b *mcpBody) messages() (msgs []jsonrpc.Message, batch, ok bool) {
	if !b.decoded {
		b.decoded = true
		b.msgs, b.batch, b.ok = decodeMessages(b.data)
	}
	return b.msgs, b.batch, b.ok
}

func (*mcpBody) Close() error { return nil }

// readMCPBody reads r's body once, up to maxMCPBody, and puts it back as an
// mcpBody; a body already read is not read again. A body over the bound is
// answered 413 here, as go-sdk would, and ok is false.
func readMCPBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	if b, ok := r.Body.(*mcpBody); ok {
		return b.data, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMCPBody))
	r.Body.Close()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		}
		return nil, false
	}
	r.Body = &mcpBody{Reader: bytes.NewReader(body), data: body}
	return body, true
}

// maxMCPDepth bounds the nesting of a JSON-RPC message outside a tool's
// arguments, as /v1/call's envelope is bounded: each level costs this
// scanner a frame and a path, so an unbounded one let a 6 MB body of
// brackets take minutes and gigabytes.
const maxMCPDepth = 64

// duplicateKey finds the first key that an object of data repeats, or
// nesting deeper than maxMCPDepth, and says what (such as "the key
// params.name is given twice") and whether it is inside a message's
// params. It reports nothing for data that is not JSON.
func duplicateKey(data []byte) (problem string, inParams, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*dupFrame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false, false // io.EOF, or not JSON: go-sdk answers
		}
		top := (*dupFrame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.skip {
			// Inside params.arguments: only nesting is followed.
			switch tok {
			case json.Delim('{'), json.Delim('['):
				top.depth++
			case json.Delim('}'), json.Delim(']'):
				top.depth--
			}
			if top.depth == 0 {
				stack = valueDone(stack[:len(stack)-1])
			}
			continue
		}
		if top != nil && top.object && !top.haveKey {
			if tok == json.Delim('}') {
				stack = valueDone(stack[:len(stack)-1])
				continue
			}
			k, _ := tok.(string)
			if top.keys[k] {
				msg := strings.TrimLeft(top.path, "[].")
				return "the key " + strings.TrimPrefix(top.path+"."+k, ".") + " is given twice; each key may appear once", msg == "params" || strings.HasPrefix(msg, "params."), true
			}
			top.keys[k] = true
			top.key, top.haveKey = k, true
			continue
		}
		here := ""
		switch {
		case top != nil && top.object:
			here = strings.TrimPrefix(top.path+"."+top.key, ".")
		case top != nil:
			here = top.path + "[]"
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && strings.TrimLeft(here, "[].") == "params.arguments" {
			stack = append(stack, &dupFrame{skip: true, depth: 1, path: here})
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && len(stack) >= maxMCPDepth {
			return fmt.Sprintf("the message is nested more than %d levels deep", maxMCPDepth), false, true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &dupFrame{object: true, keys: map[string]bool{}, path: here})
		case json.Delim('['):
			stack = append(stack, &dupFrame{path: here})
		case json.Delim(']'):
			stack = valueDone(stack[:len(stack)-1])
		default:
			stack = valueDone(stack)
		}
	}
}

// dupFrame is an object or array that duplicateKey is inside.
type dupFrame struct {
	object  bool
	keys    map[string]bool
	key     string // the key whose value is being read
	haveKey bool
	path    string
	// skip marks a tool's arguments, whose keys are not checked here;
	// depth is the nesting inside them.
	skip  bool
	depth int
}

// valueDone notes that a value of the innermost object has been read, so
// that a key comes next.
func valueDone(stack []*dupFrame) []*dupFrame {
	if n := len(stack); n > 0 && stack[n-1].object {
		stack[n-1].haveKey = false
	}
	return stack
}
