package catalog

import (
	"bytes"
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A writer encodes the catalog's own types as JSON by appending to a byte
// slice, without reflection: the catalog file, the fingerprints and the
// projections of 2000 tools each take a few milliseconds this way, where
// encoding/json takes tens. Its output is byte for byte what encoding/json
// writes for the same values with SetEscapeHTML(false), indented as with
// SetIndent("", "  ") or compact, and TestWriterMatchesEncodingJSON holds
// it to that.
type writer struct {
	b []byte
	// indent writes two spaces per level, as SetIndent("", "  ").
	indent bool
	// depth is the nesting level, and first says that the innermost open
	// object or array has no member yet.
	depth int
	first bool
	// err is set when a value cannot be written, such as NaN.
	err error
	// scratch holds the description being planned (see dialect.plan).
	scratch []byte
}

// The methods below append to a local copy of w.b and store it once: w
// lives on the heap, and while the garbage collector runs every store of
// w.b costs a write barrier.

func (w *writer) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

func (w *writer) close(c byte) {
	w.depth--
	b := w.b
	if !w.first && w.indent {
		b = newline(b, w.depth)
	}
	w.b = append(b, c)
	w.first = false
}

// newlineSpaces starts an indented line: a newline and then the spaces,
// in one append for the usual depths; deeper lines take more.
const newlineSpaces = "\n" + spaces

const spaces = "                                                                "

func newline(b []byte, depth int) []byte {
	n := 1 + 2*depth
	if n <= len(newlineSpaces) {
		return append(b, newlineSpaces[:n]...)
	}
	b = append(b, newlineSpaces...)
	for n -= len(newlineSpaces); n > 0; {
		k := min(n, len(spaces))
		b = append(b, spaces[:k]...)
		n -= k
	}
	return b
}

// next starts a member of the innermost object or array.
func (w *writer) next() {
	w.b = w.appendNext(w.b)
}

func (w *writer) appendNext(b []byte) []byte {
	if !w.first {
		b = append(b, ',')
	}
	if w.indent {
		b = newline(b, w.depth)
	}
	w.first = false
	return b
}

// key starts an object member. k is one of the catalog's own keys, which
// need no escaping.
func (w *writer) key(k string) {
	b := w.appendNext(w.b)
	b = append(b, '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	if w.indent {
		b = append(b, ' ')
	}
	w.b = b
}

func (w *writer) strKey(k string) {
	w.next()
	w.str(k)
	w.b = append(w.b, ':')
	if w.indent {
		w.b = append(w.b, ' ')
	}
}

const hexDigits = "0123456789abcdef"

// str writes a string as encoding/json's appendString does.
func (w *writer) str(s string) {
	b := append(w.b, '"')
	start, i := 0, 0
	for i < len(s) {
		// Most text needs no escaping: skip it eight bytes at a time, to
		// the first byte that may.
		for i+8 <= len(s) {
			m := special8(le64(s[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func (w *writer) int(i int64) { w.b = strconv.AppendInt(w.b, i, 10) }

// float writes a number as encoding/json's floatEncoder does.
func (w *writer) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.fail(&json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)})
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	w.b = b
}

func (w *writer) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

func (w *writer) null() { w.b = append(w.b, "null"...) }

func (w *writer) fail(err error) {
	if w.err == nil && err != nil {
		w.err = err
	}
}

// value writes a JSON-shaped value: string, bool, int64, int, float64,
// json.Number, []any, map[string]any (keys sorted) or nil. Anything else
// goes through encoding/json, re-indented to fit.
func (w *writer) value(v any) {
	switch x := v.(type) {
	case nil:
		w.null()
	case string:
		w.str(x)
	case bool:
		w.bool(x)
	case int64:
		w.int(x)
	case int:
		w.int(int64(x))
	case float64:
		w.float(x)
	case []any:
		w.list(x)
	case map[string]any:
		w.object(x)
	default:
		w.other(v)
	}
}

// list writes a list of JSON-shaped values (see value).
func (w *writer) list(x []any) {
	if x == nil {
		w.null()
		return
	}
	w.open('[')
	for _, e := range x {
		w.next()
		w.value(e)
	}
	w.close(']')
}

func (w *writer) object(m map[string]any) {
	if m == nil {
		w.null()
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.open('{')
	for _, k := range keys {
		w.strKey(k)
		w.value(m[k])
	}
	w.close('}')
}

// compactJSON writes v as encoding/json does, compact and without HTML
// escaping, its keys in its types' order: for what the catalog file holds
// on one line.
func (w *writer) compactJSON(v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		w.fail(err)
		return
	}
	w.b = append(w.b, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// other writes a value of a type the writer does not know, through
// encoding/json.
func (w *writer) other(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return
	}
	var decoded any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		w.fail(err)
		return
	}
	w.anyNumber(decoded)
}

// anyNumber writes a decoded value whose numbers are json.Numbers.
func (w *writer) anyNumber(v any) {
	switch x := v.(type) {
	case json.Number:
		w.b = append(w.b, x...)
	case []any:
		w.open('[')
		for _, e := range x {
			w.next()
			w.anyNumber(e)
		}
		w.close(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.open('{')
		for _, k := range keys {
			w.strKey(k)
			w.anyNumber(x[k])
		}
		w.close('}')
	default:
		w.value(x)
	}
}

// sizeHint estimates the size of the catalog file: a little more than it
// takes, so that the writer's buffer is allocated once.
func (c *Catalog) sizeHint() int {
	n := 4096
	for _, t := range c.Tools() {
		n += toolSize(t, true)
	}
	return n
}

// toolsSize estimates the size of tools in a projection, whose responses
// are only MCP's: a little more than they take.
func toolsSize(tools []toolOf, responses bool) int {
	n := 0
	for _, e := range tools {
		n += toolSize(e.t, responses)
	}
	return n
}

func toolSize(t *Tool, responses bool) int {
	n := 300 + len(t.Name) + len(t.Description)
	for _, m := range []*Message{&t.Request, t.Response} {
		if m != nil && (m == &t.Request || responses) {
			n += fieldsSize(m.Fields)
		}
	}
	return n
}

func fieldsSize(fields []*Field) int {
	n := 0
	for _, f := range fields {
		n += 250 + 2*len(f.Name) + len(f.Description) + fieldsSize(f.Fields)
	}
	return n
}

// The catalog file.

// catalogFile writes the catalog file: a header of one line per key, one
// line per service and per tool, and one line per field, each line
// compact JSON. A diff of a checked-in catalog shows the fields that
// changed, and each tool's text is its canonical form (see digest) but for
// line breaks and positions, so that Parse verifies a fingerprint by
// hashing the file's own bytes.
func (w *writer) catalogFile(f *file) {
	w.b = append(w.b, "{\n  \"format\": "...)
	w.str(f.Format)
	w.b = append(w.b, ",\n  \"fingerprint\": "...)
	w.str(f.Fingerprint)
	w.b = append(w.b, ",\n  \"services\": "...)
	if f.Services == nil {
		w.null()
	} else {
		w.lines(len(f.Services), 2, func(i int) {
			s := f.Services[i]
			if s == nil {
				w.null()
				return
			}
			w.serviceHead(s, false)
			if s.Tools == nil {
				w.null()
			} else {
				w.lines(len(s.Tools), 3, func(i int) { w.tool(s.Tools[i], s.Tools[i].fingerprint(), false) })
			}
			w.close('}')
		})
	}
	w.b = append(w.b, "\n}"...)
}

// lines writes an array with each element on a line of its own, indented
// by depth levels, and the closing bracket on the next line at the
// level before. The file's layout is compact JSON but for these breaks.
func (w *writer) lines(n, depth int, elem func(i int)) {
	w.open('[')
	for i := range n {
		w.next()
		w.lineBreak(depth)
		elem(i)
	}
	if n > 0 {
		w.lineBreak(depth - 1)
	}
	w.close(']')
}

func (w *writer) lineBreak(depth int) {
	w.b = append(w.b, '\n')
	w.b = append(w.b, spaces[:2*depth]...)
}

func (t *Tool) fingerprint() string {
	if t == nil {
		return ""
	}
	return t.Fingerprint
}

// serviceHead writes a service up to the value of "tools". Like a
// position, the directory says where a contract is, not what it is, so the
// canonical form for fingerprints leaves it out: a catalog written next to
// its contracts and one written elsewhere fingerprint alike.
func (w *writer) serviceHead(s *Service, canon bool) {
	w.open('{')
	w.key("name")
	w.str(s.Name)
	w.key("pos")
	w.pos(s.Pos, canon)
	w.key("version")
	w.str(s.Version)
	w.key("description")
	w.str(s.Description)
	w.key("dir")
	if canon {
		w.str("")
	} else {
		w.str(s.Dir)
	}
	w.key("handler")
	w.str(s.Handler)
	if s.MCPTitle != "" {
		w.key("mcpTitle")
		w.str(s.MCPTitle)
	}
	if len(s.Scopes) > 0 {
		w.key("scopes")
		w.elems(len(s.Scopes), func(i int) { w.str(s.Scopes[i]) })
	}
	// Prompts and resources are few: encoding/json writes them, positions
	// blanked in the canonical form, so that the service's part of the
	// catalog's fingerprint covers them.
	if len(s.Prompts) > 0 {
		w.key("prompts")
		if canon {
			w.compactJSON(blankPrompts(s.Prompts))
		} else {
			w.compactJSON(s.Prompts)
		}
	}
	if len(s.Resources) > 0 {
		w.key("resources")
		if canon {
			w.compactJSON(blankResources(s.Resources))
		} else {
			w.compactJSON(s.Resources)
		}
	}
	if len(s.Skills) > 0 {
		w.key("skills")
		if canon {
			w.compactJSON(blankSkills(s.Skills))
		} else {
			w.compactJSON(s.Skills)
		}
	}
	if len(s.Groups) > 0 {
		w.key("groups")
		w.elems(len(s.Groups), func(i int) {
			g := s.Groups[i]
			w.open('{')
			w.key("name")
			w.str(g.Name)
			w.key("description")
			w.str(g.Description)
			if g.Deferred {
				w.key("deferred")
				w.bool(true)
			}
			w.close('}')
		})
	}
	if u := s.Upstream; u != nil {
		w.key("upstream")
		w.upstream(u)
	}
	w.key("tools")
}

func (w *writer) upstream(u *Upstream) {
	w.open('{')
	if len(u.Command) > 0 {
		w.key("command")
		w.elems(len(u.Command), func(i int) { w.str(u.Command[i]) })
	}
	w.optStr("url", u.URL)
	w.optStr("dir", u.Dir)
	for _, vs := range []struct {
		key  string
		list []ValueFrom
	}{{"env", u.Env}, {"headers", u.Headers}} {
		if len(vs.list) == 0 {
			continue
		}
		w.key(vs.key)
		w.elems(len(vs.list), func(i int) {
			v := vs.list[i]
			w.open('{')
			w.key("name")
			w.str(v.Name)
			w.optStr("env", v.Env)
			w.optStr("file", v.File)
			w.optStr("prefix", v.Prefix)
			w.close('}')
		})
	}
	w.optStr("startTimeout", u.StartTimeout)
	w.optStr("callTimeout", u.CallTimeout)
	w.optStr("checkInterval", u.CheckInterval)
	w.close('}')
}

// tool writes a tool with the given fingerprint: in the file's layout, or
// with canon in canonical form (compact, positions blank).
func (w *writer) tool(t *Tool, fingerprint string, canon bool) {
	if t == nil {
		w.null()
		return
	}
	w.open('{')
	w.key("name")
	w.str(t.Name)
	w.key("pos")
	w.pos(t.Pos, canon)
	w.key("fingerprint")
	w.str(fingerprint)
	w.key("description")
	w.str(t.Description)
	if t.Title != "" {
		w.key("title")
		w.str(t.Title)
	}
	if t.Deprecated {
		w.key("deprecated")
		w.bool(true)
	}
	if t.Strict {
		w.key("strict")
		w.bool(true)
	}
	w.key("annotations")
	w.annotations(&t.Annotations)
	w.key("request")
	w.message(&t.Request, canon)
	if t.Response != nil {
		w.key("response")
		w.message(t.Response, canon)
	}
	if len(t.Examples) > 0 {
		w.key("examples")
		w.open('[')
		for _, ex := range t.Examples {
			w.next()
			w.object(ex)
		}
		w.close(']')
	}
	if t.MCPName != "" {
		w.key("mcpName")
		w.str(t.MCPName)
	}
	if t.Task != "" {
		w.key("task")
		w.str(t.Task)
	}
	if len(t.Scopes) > 0 {
		w.key("scopes")
		w.elems(len(t.Scopes), func(i int) { w.str(t.Scopes[i]) })
	}
	if t.Group != "" {
		w.key("group")
		w.str(t.Group)
	}
	if t.Deferred {
		w.key("deferred")
		w.bool(true)
	}
	w.close('}')
}

func (w *writer) annotations(a *Annotations) {
	w.open('{')
	w.optBool("readOnly", a.ReadOnly)
	w.optBool("destructive", a.Destructive)
	w.optBool("idempotent", a.Idempotent)
	w.optBool("openWorld", a.OpenWorld)
	w.close('}')
}

func (w *writer) optBool(key string, v *bool) {
	if v != nil {
		w.key(key)
		w.bool(*v)
	}
}

func (w *writer) optInt(key string, v *int64) {
	if v != nil {
		w.key(key)
		w.int(*v)
	}
}

func (w *writer) optFloat(key string, v *float64) {
	if v != nil {
		w.key(key)
		w.float(*v)
	}
}

func (w *writer) values(key string, vs []any) {
	if len(vs) > 0 {
		w.key(key)
		w.value(vs)
	}
}

// message writes a request or response; in the file, a tool's line is at
// depth 3, so its fields go at depth 4.
func (w *writer) message(m *Message, canon bool) {
	w.open('{')
	w.key("pos")
	w.pos(m.Pos, canon)
	if m.Description != "" {
		w.key("description")
		w.str(m.Description)
	}
	w.key("fields")
	switch {
	case m.Fields == nil && !canon:
		w.null()
	case canon:
		w.open('[')
		for _, f := range m.Fields {
			w.next()
			w.field(f, canon)
		}
		w.close(']')
	default:
		w.lines(len(m.Fields), 4, func(i int) { w.field(m.Fields[i], false) })
	}
	w.close('}')
}

func (w *writer) field(f *Field, canon bool) {
	if f == nil {
		w.null()
		return
	}
	w.open('{')
	w.key("name")
	w.str(f.Name)
	w.key("pos")
	w.pos(f.Pos, canon)
	w.key("type")
	w.str(string(f.Type))
	if f.Items != "" {
		w.key("items")
		w.str(string(f.Items))
	}
	if len(f.Fields) > 0 {
		w.key("fields")
		w.elems(len(f.Fields), func(i int) { w.field(f.Fields[i], canon) })
	}
	w.key("description")
	w.str(f.Description)
	w.key("required")
	w.bool(f.Required)
	if f.Deprecated {
		w.key("deprecated")
		w.bool(true)
	}
	if f.Default != nil {
		w.key("default")
		w.value(f.Default)
	}
	w.values("enum", f.Enum)
	w.values("examples", f.Examples)
	w.optInt("minLength", f.MinLength)
	w.optInt("maxLength", f.MaxLength)
	if f.Pattern != "" {
		w.key("pattern")
		w.str(f.Pattern)
	}
	if f.Format != "" {
		w.key("format")
		w.str(f.Format)
	}
	w.optFloat("minimum", f.Minimum)
	w.optFloat("maximum", f.Maximum)
	w.optFloat("exclusiveMinimum", f.ExclusiveMinimum)
	w.optFloat("exclusiveMaximum", f.ExclusiveMaximum)
	w.optInt("minItems", f.MinItems)
	w.optInt("maxItems", f.MaxItems)
	if f.UniqueItems {
		w.key("uniqueItems")
		w.bool(true)
	}
	if f.Object {
		w.key("object")
		w.bool(true)
	}
	w.optStr("mcpHeader", f.MCPHeader)
	w.close('}')
}

// pos writes a position as Pos.MarshalText does, as a JSON string; blank
// writes "", the canonical form's position.
func (w *writer) pos(p Pos, blank bool) {
	if blank || p == (Pos{}) {
		w.b = append(w.b, '"', '"')
		return
	}
	// The line and column need no escaping: escape the file name alone
	// and append them inside its quotes.
	w.str(p.File)
	w.b = w.b[:len(w.b)-1]
	w.b = append(w.b, ':')
	w.b = strconv.AppendInt(w.b, int64(p.Line), 10)
	w.b = append(w.b, ':')
	w.b = strconv.AppendInt(w.b, int64(p.Column), 10)
	w.b = append(w.b, '"')
}

// Projections.

func (w *writer) elems(n int, elem func(i int)) {
	w.open('[')
	for i := range n {
		w.next()
		elem(i)
	}
	w.close(']')
}

func (w *writer) optStr(key, v string) {
	if v != "" {
		w.key(key)
		w.str(v)
	}
}

func (w *writer) openAIChatTool(t *OpenAIChatTool) {
	w.open('{')
	w.key("type")
	w.str(t.Type)
	w.key("function")
	w.open('{')
	w.openAIFunction(&t.Function)
	w.close('}')
	w.close('}')
}

func (w *writer) openAIResponsesTool(t *OpenAIResponsesTool) {
	w.open('{')
	w.key("type")
	w.str(t.Type)
	switch t.Type {
	case "namespace":
		w.key("name")
		w.str(t.Name)
		w.key("description")
		w.str(t.Description)
		w.key("tools")
		w.elems(len(t.Tools), func(i int) { w.openAIResponsesTool(&t.Tools[i]) })
	case "tool_search":
	default:
		w.openAIFunction(&t.OpenAIFunction)
		if t.DeferLoading {
			w.key("defer_loading")
			w.bool(true)
		}
	}
	w.close('}')
}

func (w *writer) openAIFunction(f *OpenAIFunction) {
	w.key("name")
	w.str(f.Name)
	w.optStr("description", f.Description)
	w.key("parameters")
	w.objectSchema(f.Parameters)
	w.key("strict")
	w.bool(f.Strict)
}

func (w *writer) anthropicTool(t *AnthropicTool) {
	w.open('{')
	w.optStr("type", t.Type)
	w.key("name")
	w.str(t.Name)
	w.optStr("description", t.Description)
	if t.InputSchema != nil {
		w.key("input_schema")
		w.objectSchema(t.InputSchema)
	}
	if t.Strict {
		w.key("strict")
		w.bool(true)
	}
	if len(t.InputExamples) > 0 {
		w.key("input_examples")
		w.elems(len(t.InputExamples), func(i int) { w.object(t.InputExamples[i]) })
	}
	if t.DeferLoading {
		w.key("defer_loading")
		w.bool(true)
	}
	w.close('}')
}

func (w *writer) geminiFunction(f *GeminiFunction) {
	w.open('{')
	w.key("name")
	w.str(f.Name)
	w.optStr("description", f.Description)
	if f.Parameters != nil {
		w.key("parameters")
		w.objectSchema(f.Parameters)
	}
	w.close('}')
}

func (w *writer) bedrockTool(t *BedrockTool) {
	w.open('{')
	w.key("toolSpec")
	w.open('{')
	w.key("name")
	w.str(t.ToolSpec.Name)
	w.optStr("description", t.ToolSpec.Description)
	w.key("inputSchema")
	w.open('{')
	w.key("json")
	w.objectSchema(t.ToolSpec.InputSchema.JSON)
	w.close('}')
	if t.ToolSpec.Strict {
		w.key("strict")
		w.bool(true)
	}
	w.close('}')
	w.close('}')
}

func (w *writer) mcpTool(t *MCPTool) {
	w.open('{')
	if m := t.Meta; m != nil {
		w.key("_meta")
		w.open('{')
		if len(m.Groups) > 0 {
			w.key(MCPGroupsKey)
			w.elems(len(m.Groups), func(i int) { w.str(m.Groups[i]) })
		}
		if len(m.Scopes) > 0 {
			w.key(MCPScopesKey)
			w.elems(len(m.Scopes), func(i int) { w.str(m.Scopes[i]) })
		}
		if m.DeferLoading {
			w.key(MCPDeferLoadingKey)
			w.bool(true)
		}
		w.close('}')
	}
	if a := t.Annotations; a != nil {
		w.key("annotations")
		w.open('{')
		w.optBool("destructiveHint", a.DestructiveHint)
		w.key("idempotentHint")
		w.bool(a.IdempotentHint)
		w.optBool("openWorldHint", a.OpenWorldHint)
		w.key("readOnlyHint")
		w.bool(a.ReadOnlyHint)
		w.optStr("title", a.Title)
		w.close('}')
	}
	w.optStr("description", t.Description)
	if e := t.Execution; e != nil {
		w.key("execution")
		w.open('{')
		w.key("taskSupport")
		w.str(e.TaskSupport)
		w.close('}')
	}
	w.key("inputSchema")
	w.objectSchema(t.InputSchema)
	w.key("name")
	w.str(t.Name)
	if t.OutputSchema != nil {
		w.key("outputSchema")
		w.objectSchema(t.OutputSchema)
	}
	w.optStr("title", t.Title)
	w.close('}')
}

func (w *writer) typeList(t TypeList) {
	switch {
	case len(t) == 1:
		w.str(t[0])
	case t == nil:
		w.null()
	default:
		w.open('[')
		for _, s := range t {
			w.next()
			w.str(s)
		}
		w.close(']')
	}
}

func (w *writer) objectSchema(o *ObjectSchema) {
	if o == nil {
		w.null()
		return
	}
	w.open('{')
	w.key("type")
	w.typeList(o.Type)
	w.optStr("description", o.Description)
	if o.plan != nil {
		w.members(*o.plan, o.fields)
		w.close('}')
		return
	}
	w.key("properties")
	if o.Properties == nil {
		w.null()
	} else {
		w.properties(o.Properties)
	}
	w.strings("required", o.Required)
	w.optBool("additionalProperties", o.AdditionalProperties)
	w.strings("propertyOrdering", o.PropertyOrdering)
	w.close('}')
}

func (w *writer) properties(ps Properties) {
	w.open('{')
	for _, p := range ps {
		w.strKey(p.Name)
		w.schema(p.Schema)
	}
	w.close('}')
}

// strings writes a list of strings under key, unless it is empty.
func (w *writer) strings(key string, ss []string) {
	if len(ss) > 0 {
		w.key(key)
		w.elems(len(ss), func(i int) { w.str(ss[i]) })
	}
}

// members writes the members of an object schema whose properties are
// fields, as d plans them: what schema writes for the properties,
// required, additionalProperties and propertyOrdering that d.fill or
// d.field fill in.
func (w *writer) members(d dialect, fields []*Field) {
	w.key("properties")
	w.open('{')
	for _, f := range fields {
		w.strKey(f.Name)
		w.planned(d, f)
	}
	w.close('}')
	n := 0
	for _, f := range fields {
		if f.Required || d.allRequired {
			if n == 0 {
				w.key("required")
				w.open('[')
			}
			n++
			w.next()
			w.str(f.Name)
		}
	}
	if n > 0 {
		w.close(']')
	}
	if d.closed {
		w.key("additionalProperties")
		w.bool(false)
	}
	if d.ordered && len(fields) > 0 {
		w.key("propertyOrdering")
		w.elems(len(fields), func(i int) { w.str(fields[i].Name) })
	}
}

// planned writes the schema of field f as dialect d plans it: what schema
// writes for the Schema that d.field fills in.
func (w *writer) planned(d dialect, f *Field) {
	p := d.plan(f, &w.scratch)
	w.open('{')
	if len(p.typ) > 0 {
		w.key("type")
		w.typeList(p.typ)
	}
	w.optStr("description", p.desc)
	if p.nullable {
		w.key("nullable")
		w.bool(true)
	}
	if p.keep&kwEnum != 0 && f.Type != Array {
		w.key("enum")
		w.open('[')
		for _, v := range f.Enum {
			w.next()
			w.value(v)
		}
		if p.enumNull {
			w.next()
			w.null()
		}
		w.close(']')
	}
	if p.keep&kwDefault != 0 {
		w.key("default")
		w.value(f.Default)
	}
	if p.keep&kwFormat != 0 {
		w.key("format")
		w.str(f.Format)
	}
	if p.keep&kwPattern != 0 {
		w.key("pattern")
		w.str(f.Pattern)
	}
	w.optInt("minLength", kept(p, kwMinLength, f.MinLength))
	w.optInt("maxLength", kept(p, kwMaxLength, f.MaxLength))
	w.optFloat("minimum", kept(p, kwMinimum, f.Minimum))
	w.optFloat("maximum", kept(p, kwMaximum, f.Maximum))
	w.optFloat("exclusiveMinimum", kept(p, kwExclusiveMinimum, f.ExclusiveMinimum))
	w.optFloat("exclusiveMaximum", kept(p, kwExclusiveMaximum, f.ExclusiveMaximum))
	if f.Type == Array {
		w.key("items")
		w.open('{')
		w.key("type")
		w.typeList(d.typeList(f.Items, false))
		if f.IsRecord() {
			// p.desc, which may share w.scratch with the plans of the
			// record's fields, is written already.
			w.members(d, f.Fields)
		}
		if p.keep&kwEnum != 0 {
			w.values("enum", f.Enum)
		}
		w.close('}')
	}
	w.optInt("minItems", kept(p, kwMinItems, f.MinItems))
	w.optInt("maxItems", kept(p, kwMaxItems, f.MaxItems))
	if p.keep&kwUniqueItems != 0 {
		w.key("uniqueItems")
		w.bool(true)
	}
	if p.keep&kwExamples != 0 {
		switch {
		case !d.singleExample:
			w.key("examples")
			w.value(f.Examples)
		case f.Examples[0] != nil:
			w.key("example")
			w.value(f.Examples[0])
		}
	}
	w.optStr("x-mcp-header", p.header)
	w.close('}')
}

func (w *writer) schema(s *Schema) {
	if s == nil {
		w.null()
		return
	}
	w.open('{')
	if len(s.Type) > 0 {
		w.key("type")
		w.typeList(s.Type)
	}
	w.optStr("description", s.Description)
	if s.Nullable {
		w.key("nullable")
		w.bool(true)
	}
	if len(s.Properties) > 0 {
		w.key("properties")
		w.properties(s.Properties)
	}
	w.strings("required", s.Required)
	w.optBool("additionalProperties", s.AdditionalProperties)
	w.strings("propertyOrdering", s.PropertyOrdering)
	w.values("enum", s.Enum)
	if s.Default != nil {
		w.key("default")
		w.value(s.Default)
	}
	w.optStr("format", s.Format)
	w.optStr("pattern", s.Pattern)
	w.optInt("minLength", s.MinLength)
	w.optInt("maxLength", s.MaxLength)
	w.optFloat("minimum", s.Minimum)
	w.optFloat("maximum", s.Maximum)
	w.optFloat("exclusiveMinimum", s.ExclusiveMinimum)
	w.optFloat("exclusiveMaximum", s.ExclusiveMaximum)
	if s.Items != nil {
		w.key("items")
		w.schema(s.Items)
	}
	w.optInt("minItems", s.MinItems)
	w.optInt("maxItems", s.MaxItems)
	if s.UniqueItems {
		w.key("uniqueItems")
		w.bool(true)
	}
	w.values("examples", s.Examples)
	if s.Example != nil {
		w.key("example")
		w.value(s.Example)
	}
	w.optStr("x-mcp-header", s.MCPHeader)
	w.close('}')
}
