package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolc/toolc/internal/bodymem"
	"github.com/toolc/toolc/internal/httpjson"
)

// rejectAmbiguous answers 400 and a JSON-RPC error to an MCP POST whose
// body readers could take for different messages (ambiguousKey), before
// anything else reads it: -32602 (invalid params) when the key is inside
// params, -32600 (invalid request) otherwise. go-sdk keeps the last of two
// "name" keys and matches keys exactly, while a gateway or log in front
// may read the first, or match "NAME" to name as encoding/json does: a
// tools/call of {"name": "allowed", "name": "other"} would pass an
// allowlist and run "other", and {"name": "hidden", "NAME": "x"} told one
// reader of a tool another did not see. /v1/call refuses the same for its
// envelope (see httpapi's envelope validator), and stdio the same lines
// (stdioFilter). A tool's arguments are left to the argument validator,
// which reads them exactly and refuses a repeated or unknown argument
// with a tool error the model reads. A body that is not JSON is go-sdk's
// to refuse. Waits for go-sdk: a decoder that refuses a repeated key.
func rejectAmbiguous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readMCPBody(w, r)
		if !ok {
			return
		}
		if problem, code, ok := ambiguousKey(body); ok {
			id := idOf(body)
			if id == nil {
				id = json.RawMessage("null")
			}
			httpjson.Write(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
				"code": code, "message": problem,
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
// single returns the one message of r's body, as go-sdk reads it, or nil
// for a body that is a batch, holds no message or was not read by
// rejectAmbiguous.
func single(r *http.Request) jsonrpc.Message {
	b, ok := r.Body.(*mcpBody)
	if !ok {
		return nil
	}
	msgs, batch, ok := b.messages()
	if !ok || batch || len(msgs) != 1 {
		return nil
	}
	return msgs[0]
}

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
		switch {
		case errors.As(err, &tooLarge):
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		case errors.Is(err, bodymem.ErrExhausted):
			// The server's budget for bodies in flight (httpapi's
			// ConnLimits.MaxBodyMemory) is spent: a moment later it
			// may not be.
			w.Header().Set("Retry-After", "1")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
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

// sdkMaxDepth is the nesting go-sdk's decoder refuses a message past
// (internal/json's defaultMaxDepth), with a plain-text 400 rather than a
// JSON-RPC error: the arguments of a tools/call or a prompts/get, which
// the scanner skips, are refused here first, as invalid params.
const sdkMaxDepth = 1000

// ambiguousKey finds what makes a JSON-RPC message (or a batch of them)
// mean different things to different readers, and says what, with the
// JSON-RPC code of the answer: a key that an object repeats anywhere
// outside a tool's arguments; two keys of a message or of its params that
// differ only in case (encoding/json's matching, Unicode's simple folding:
// "params" and "paramſ" are one key to it), which go-sdk reads as two and
// a case-insensitive reader as one; or nesting deeper than maxMCPDepth. It
// reports nothing for data that is not JSON, which go-sdk refuses; but a
// body that go-sdk reads and encoding/json does not (something after the
// message) is refused too, with -32700.
func ambiguousKey(data []byte) (problem string, code int, ok bool) {
	if plainMessage(data) {
		return "", 0, false
	}
	problem, inParams, ok := findAmbiguous(data)
	if !ok {
		if json.Valid(data) {
			return "", 0, false
		}
		// go-sdk's decoder reads the first value of a body and lets
		// whatever follows it pass (another message, a NUL byte), where
		// encoding/json refuses the body: two readers, two verdicts.
		if _, _, sdkReads := decodeMessages(data); sdkReads {
			return "Parse error: the body is not one JSON value; something follows the message", jsonrpc.CodeParseError, true
		}
		return "", 0, false // no reader takes it: go-sdk refuses it
	}
	if inParams {
		return "invalid params: " + problem, jsonrpc.CodeInvalidParams, true
	}
	return "invalid request: " + problem, jsonrpc.CodeInvalidRequest, true
}

func findAmbiguous(data []byte) (problem string, inParams, ok bool) {
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
				if len(stack)-1+top.depth > sdkMaxDepth {
					return fmt.Sprintf("the message is nested more than %d levels deep, in %s", sdkMaxDepth, strings.TrimLeft(top.path, "[].")), true, true
				}
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
			where := strings.TrimLeft(top.path, "[].")
			params := where == "params" || strings.HasPrefix(where, "params.")
			if top.keys[k] {
				return "the key " + strings.TrimPrefix(top.path+"."+k, ".") + " is given twice; each key may appear once", params, true
			}
			top.keys[k] = true
			if top.folded != nil {
				f := foldKey(k)
				if other, seen := top.folded[f]; seen {
					prefix := strings.TrimPrefix(top.path+".", ".")
					return fmt.Sprintf("the keys %s%s and %s%s differ only in case, which some readers take for one key; each key may appear once, in one spelling", prefix, other, prefix, k), params, true
				}
				top.folded[f] = k
			}
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
		where := strings.TrimLeft(here, "[].")
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && where == "params.arguments" {
			stack = append(stack, &dupFrame{skip: true, depth: 1, path: here})
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && len(stack) >= maxMCPDepth {
			return fmt.Sprintf("the message is nested more than %d levels deep", maxMCPDepth), false, true
		}
		switch tok {
		case json.Delim('{'):
			f := &dupFrame{object: true, keys: map[string]bool{}, path: here}
			if where == "" || where == "params" {
				// The message and its params are what readers match to
				// their fields: method, id, params, name, arguments.
				f.folded = map[string]string{}
			}
			stack = append(stack, f)
		case json.Delim('['):
			stack = append(stack, &dupFrame{path: here})
		case json.Delim(']'):
			stack = valueDone(stack[:len(stack)-1])
		default:
			stack = valueDone(stack)
		}
	}
}

// plainMessage reports whether data is certainly unambiguous: one valid
// JSON object, whose keys are ASCII without escapes, and no two keys of any
// object outside params.arguments alike (or alike but for case, which
// findAmbiguous forbids in the message and its params only). That is every
// message of a well-behaved client, and it takes a pass of json.Valid and
// one over the bytes, with one allocation (the keys it compares), where
// findAmbiguous, which says what a problem is, decodes every token: about
// 90 allocations for a tools/call, a third of an MCP call's (issue 27).
// Anything else, batches included, is left to findAmbiguous: false is no
// verdict.
func plainMessage(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	// Room for the keys of a message and its params (jsonrpc, id,
	// method, params; name, arguments, _meta) without growing.
	s := plainScan{data: data, keys: make([][]byte, 0, 8)}
	s.space()
	return s.data[s.i] == '{' && s.object(messageObject, 1)
}

// plainScan walks JSON that json.Valid has accepted.
type plainScan struct {
	data []byte
	i    int
	keys [][]byte // the keys of the objects being read, innermost last
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *plainScan) space() {
	for s.i < len(s.data) && isSpace(s.data[s.i]) {
		s.i++
	}
}

// Where an object is, for plainScan: the message itself, whose params
// it reads as such; the message's params, whose arguments it skips (the
// argument validator reads them); or anywhere else.
type objectKind int

const (
	anyObject objectKind = iota
	messageObject
	paramsObject
)

// object reads the object at s.i, of kind; false where plainMessage
// gives no verdict. depth bounds the nesting well inside findAmbiguous's
// maxMCPDepth.
func (s *plainScan) object(kind objectKind, depth int) bool {
	if depth > maxMCPDepth/2 {
		return false
	}
	s.i++ // {
	first := len(s.keys)
	defer func() { s.keys = s.keys[:first] }()
	for {
		s.space()
		switch s.data[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			s.space()
		}
		key, ok := s.key()
		if !ok || len(s.keys)-first >= 64 {
			return false
		}
		for _, k := range s.keys[first:] {
			if bytes.EqualFold(k, key) {
				return false
			}
		}
		s.keys = append(s.keys, key)
		s.space()
		s.i++ // :
		s.space()
		switch c := s.data[s.i]; {
		case kind == messageObject && string(key) == "params" && c == '{':
			if !s.object(paramsObject, depth+1) {
				return false
			}
		case kind == paramsObject && string(key) == "arguments" && (c == '{' || c == '['):
			if !s.skip() {
				return false
			}
		default:
			if !s.value(depth) {
				return false
			}
		}
	}
}

// value reads the value at s.i, inside containers nested depth deep.
func (s *plainScan) value(depth int) bool {
	switch s.data[s.i] {
	case '{':
		return s.object(anyObject, depth+1)
	case '[':
		if depth+1 > maxMCPDepth/2 {
			return false
		}
		s.i++
		for {
			s.space()
			switch s.data[s.i] {
			case ']':
				s.i++
				return true
			case ',':
				s.i++
				s.space()
			}
			if !s.value(depth + 1) {
				return false
			}
		}
	case '"':
		s.str()
	default: // a number, true, false or null
		for s.i < len(s.data) && !isSpace(s.data[s.i]) && s.data[s.i] != ',' && s.data[s.i] != '}' && s.data[s.i] != ']' {
			s.i++
		}
	}
	return true
}

// key reads a key: false for one with an escape or a byte beyond ASCII,
// which findAmbiguous decodes and folds as Unicode.
func (s *plainScan) key() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.data); j++ {
		switch c := s.data[j]; {
		case c == '"':
			s.i = j + 1
			return s.data[start:j], true
		case c == '\\' || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// str moves past the string at s.i.
func (s *plainScan) str() {
	for j := s.i + 1; j < len(s.data); j++ {
		switch s.data[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return
		}
	}
}

// skip moves past the arguments object or array at s.i; false when they
// nest past sdkMaxDepth, counting the message and its params, which
// findAmbiguous refuses.
func (s *plainScan) skip() bool {
	depth := 0
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '"':
			s.str()
			continue
		case '{', '[':
			if depth++; 2+depth > sdkMaxDepth {
				return false
			}
		case '}', ']':
			depth--
		}
		s.i++
		if depth == 0 {
			return true
		}
	}
	return true
}

// foldKey is a key as encoding/json matches it to a field: each letter
// folded to the least of its simple case folding orbit, so that two keys
// fold alike when strings.EqualFold says they are equal.
func foldKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		b.WriteRune(r)
	}
	return b.String()
}

// dupFrame is an object or array that findAmbiguous is inside.
type dupFrame struct {
	object  bool
	keys    map[string]bool
	key     string // the key whose value is being read
	haveKey bool
	path    string
	// folded, for a message and its params, maps each key's folded form
	// (foldKey) to the key.
	folded map[string]string
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
