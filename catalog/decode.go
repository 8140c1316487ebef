package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"runtime"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/toolc/toolc/internal/jsonfile"
)

// decodeFast decodes a catalog file as Marshal writes it, and normalizes
// it as decodeSlow does, without reflection: a catalog of 2000 tools loads in a few milliseconds this way,
// where encoding/json takes well over a hundred. It is strict: on anything
// unusual (a syntax error, an unknown, duplicate or differently cased key,
// null where a value belongs, a number that does not fit, another format)
// it gives up, and Parse decodes with encoding/json instead, which accepts
// exactly what it accepts and words the error. FuzzParse checks that the
// two agree on every input that decodeFast accepts.
func decodeFast(data []byte) (*file, bool) {
	d := &decoder{data: data, hash: newHasher()}
	defer d.hash.wait()
	f := &file{}
	seen := 0
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "format":
			return d.once(&seen, 1) && d.string(&f.Format) && f.Format == Format
		case "fingerprint":
			return d.once(&seen, 2) && d.string(&f.Fingerprint)
		case "services":
			return d.once(&seen, 4) && d.services(&f.Services)
		}
		return false
	})
	d.ws()
	if !ok || d.i != len(d.data) || seen&1 == 0 {
		return nil, false
	}
	if f.Services == nil {
		f.Services = []*Service{}
	}
	f.sums = append(d.hash.wait(), d.otherSums...)
	f.halves = d.halves
	return f, true
}

// hasher computes the sha256 of tools' canonical forms on a goroutine of
// its own while the decoder goes on, so that on two cores hashing takes no
// wall time. The forms go over in batches, so that a catalog of 2000
// tools takes a few dozen channel operations, not thousands, in buffers
// that the next Parse reuses.
type hasher struct {
	batches chan hashBatch
	done    chan []toolSum
	// batch is the one being filled: canon holds the forms, one after
	// another, and ends says where each ends.
	batch  hashBatch
	sums   []toolSum
	waited bool
}

type hashBatch struct {
	canon *[]byte
	ends  []int
}

const hashBatchSize = 64 << 10

var canonBuffers = sync.Pool{New: func() any { return new([]byte) }}

func newHasher() *hasher {
	h := &hasher{batches: make(chan hashBatch, 8), done: make(chan []toolSum, 1)}
	go func() {
		var sums []toolSum
		for b := range h.batches {
			start := 0
			for _, end := range b.ends {
				sums = append(sums, toolSum{sha256.Sum256((*b.canon)[start:end]), true})
				start = end
			}
			*b.canon = (*b.canon)[:0]
			canonBuffers.Put(b.canon)
		}
		h.done <- sums
	}()
	return h
}

// buffer returns the buffer to collect forms in.
func (h *hasher) buffer() []byte {
	if h.batch.canon == nil {
		h.batch.canon = canonBuffers.Get().(*[]byte)
	}
	return *h.batch.canon
}

// endTool ends the form of a tool, whose bytes are at the end of canon,
// and returns the buffer to go on with.
func (h *hasher) endTool(canon []byte) []byte {
	*h.batch.canon = canon
	h.batch.ends = append(h.batch.ends, len(canon))
	if len(canon) < hashBatchSize {
		return canon
	}
	h.batches <- h.batch
	h.batch = hashBatch{}
	return h.buffer()
}

// wait hashes what is left and returns the sums of every tool, in order.
func (h *hasher) wait() []toolSum {
	if !h.waited {
		h.waited = true
		if h.batch.canon != nil {
			h.batches <- h.batch
		}
		close(h.batches)
		h.sums = <-h.done
	}
	return h.sums
}

type decoder struct {
	data []byte
	// arena holds copies of the strings decoded so far: the catalog must
	// not share memory with data, which the caller may reuse, and copying
	// only the strings costs about half what copying all of data does.
	arena []byte
	// lastFile is the file of the last position: most positions repeat it.
	lastFile string
	i        int
	// depth is the nesting of values in examples, defaults and enums,
	// bounded as encoding/json bounds it.
	depth int
	// inRecord is set while the fields of a record field are decoded.
	inRecord bool
	// fieldSlab and toolSlab allocate fields and tools in batches.
	fieldSlab    []Field
	toolSlab     []Tool
	intSlab      []int64
	floatSlab    []float64
	fieldPtrSlab []*Field
	valueSlab    []any
	// fieldStack and valueStack hold the elements of the lists being
	// decoded until their length is known.
	fieldStack []*Field
	valueStack []any
	// While a tool is decoded (inTool), canon collects its canonical form
	// (see Catalog.digest): its text but for white space and the contents
	// of its positions and fingerprint, which skip leaves out. data[mark:]
	// is not copied yet. hash computes the forms' sha256.
	inTool bool
	canon  []byte
	mark   int
	hash   *hasher
	// otherSums are the sums of the tools that the other half decoded;
	// halves counts the halves joined, for tests.
	otherSums []toolSum
	halves    int
}

const maxDepth = 10000

func (d *decoder) ws() {
	i, data := d.i, d.data
	for i < len(data) {
		// Indentation comes in runs of spaces: skip them eight at a time.
		if i+8 <= len(data) && binary.LittleEndian.Uint64(data[i:]) == spaces8 {
			i += 8
			continue
		}
		if c := data[i]; c > ' ' || c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			break
		}
		i++
	}
	if d.inTool && i > d.i {
		d.skip(d.i, i)
	}
	d.i = i
}

// copy returns b, a slice of data, as a string in the arena. The arena
// grows in chunks and only by appending within a chunk's capacity, so the
// bytes behind a string never change.
func (d *decoder) copy(b []byte) string {
	const chunk = 64 << 10
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(d.arena)-len(d.arena) {
		if len(b) > chunk/8 {
			return string(b)
		}
		d.arena = make([]byte, 0, chunk)
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[start], len(b))
}

// skip leaves data[from:to] out of the canonical form of the tool being
// decoded.
func (d *decoder) skip(from, to int) {
	if d.inTool {
		d.canon = append(d.canon, d.data[d.mark:from]...)
		d.mark = to
	}
}

const (
	spaces8 = 0x2020202020202020
	ones8   = 0x0101010101010101
	highs8  = 0x8080808080808080
)

// special8 marks, in the high bit of each byte, the bytes of x that are a
// control character, a byte of a multi-byte UTF-8 sequence, '"' or '\\'.
// A borrow may also mark a byte after the first marked one, never before
// it, so the lowest mark is exact.
func special8(x uint64) uint64 {
	ctl := (x - 0x20*ones8) &^ x
	quote := x ^ '"'*ones8
	back := x ^ '\\'*ones8
	return (x | ctl | (quote-ones8)&^quote | (back-ones8)&^back) & highs8
}

// plainRun returns the length of the run of plain bytes (none of those
// special8 marks) at the start of b, counted eight bytes at a time.
func plainRun(b []byte) int {
	j := 0
	for j+8 <= len(b) {
		if m := special8(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		j += 8
	}
	for j < len(b) {
		if c := b[j]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		j++
	}
	return j
}

// peek returns the next byte after white space, or 0 at the end.
func (d *decoder) peek() byte {
	// Most tokens follow another without white space: look before calling
	// ws, which the compiler does not inline.
	if d.i < len(d.data) && d.data[d.i] > ' ' {
		return d.data[d.i]
	}
	d.ws()
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// once marks a key as seen, and fails on a key seen before: encoding/json
// would merge duplicates, which is not worth copying.
func (d *decoder) once(seen *int, bit int) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// object decodes an object, calling member with each key; member decodes
// the value.
func (d *decoder) object(member func(key []byte) bool) bool {
	if d.peek() != '{' {
		return false
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		if d.peek() != '"' {
			return false
		}
		key, ok := d.rawKey()
		if !ok || d.peek() != ':' {
			return false
		}
		d.i++
		if !member(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// array decodes an array, calling elem for each element.
func (d *decoder) array(elem func() bool) bool {
	if d.peek() != '[' {
		return false
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// rawKey returns an object key that needs no unescaping, without copying.
func (d *decoder) rawKey() ([]byte, bool) {
	start := d.i + 1
	if start > len(d.data) {
		return nil, false
	}
	j := start + plainRun(d.data[start:])
	if j < len(d.data) && d.data[j] == '"' {
		d.i = j + 1
		return d.data[start:j], true
	}
	return nil, false
}

// string decodes a string; one with escapes or non-ASCII text is checked
// and unescaped by encoding/json, so that it means exactly what it would
// mean there.
func (d *decoder) string(out *string) bool {
	s, ok := d.str()
	*out = s
	return ok
}

func (d *decoder) str() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	escaped, high := false, false
	for j := start + plainRun(d.data[start:]); j < len(d.data); j++ {
		switch c := d.data[j]; {
		case c == '"':
			var s string
			if seg := d.data[start:j]; !escaped && (!high || utf8.Valid(seg)) {
				s = d.copy(seg)
			} else if s, escaped = unescape(d.data[d.i : j+1]); !escaped {
				return "", false
			}
			d.i = j + 1
			return s, true
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return "", false
		default:
			high = true
		}
		if j+1 < len(d.data) {
			j += plainRun(d.data[j+1:])
		}
	}
	return "", false
}

// unescape decodes a quoted string with encoding/json.
func unescape(quoted []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// number returns the text of a number.
func (d *decoder) number() ([]byte, bool) {
	d.ws()
	start := d.i
	j := start
	n := len(d.data)
	digits := func() bool {
		k := j
		for j < n && d.data[j] >= '0' && d.data[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < n && d.data[j] == '-' {
		j++
	}
	if j < n && d.data[j] == '0' {
		j++
	} else if !digits() {
		return nil, false
	}
	if j < n && d.data[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < n && (d.data[j] == 'e' || d.data[j] == 'E') {
		j++
		if j < n && (d.data[j] == '+' || d.data[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	d.i = j
	return d.data[start:j], true
}

func (d *decoder) int64(out **int64) bool {
	text, ok := d.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		return false
	}
	if len(d.intSlab) == 0 {
		d.intSlab = make([]int64, 64)
	}
	d.intSlab[0] = v
	*out = &d.intSlab[0]
	d.intSlab = d.intSlab[1:]
	return true
}

func (d *decoder) float64(out **float64) bool {
	text, ok := d.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsInf(v, 0) {
		return false
	}
	if len(d.floatSlab) == 0 {
		d.floatSlab = make([]float64, 64)
	}
	d.floatSlab[0] = v
	*out = &d.floatSlab[0]
	d.floatSlab = d.floatSlab[1:]
	return true
}

// literal decodes true, false or null.
func (d *decoder) literal(word string) bool {
	d.ws()
	if len(d.data)-d.i >= len(word) && string(d.data[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

func (d *decoder) bool(out *bool) bool {
	switch d.peek() {
	case 't':
		*out = true
		return d.literal("true")
	case 'f':
		*out = false
		return d.literal("false")
	}
	return false
}

func (d *decoder) optBool(out **bool) bool {
	v := new(bool)
	*out = v
	return d.bool(v)
}

// value decodes any JSON value as encoding/json does into an any with
// UseNumber, and then NormalizeValue(v, elem, ""): string, bool, nil,
// []any, map[string]any, and a number as int64 when elem is Integer and
// the number integral, as float64 otherwise. An object's members are
// normalized for the fields of record, the fields of a record's items. A
// number out of range makes it give up, for Parse's slow path to explain.
func (d *decoder) value(elem Type, record []*Field) (any, bool) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		return nil, false
	}
	switch c := d.peek(); {
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		text, ok := d.number()
		if !ok {
			return nil, false
		}
		if elem == Integer {
			if i, err := strconv.ParseInt(string(text), 10, 64); err == nil {
				return i, true
			}
		}
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, false
		}
		return f, true
	case c == 't' || c == 'f':
		var b bool
		if !d.bool(&b) {
			return nil, false
		}
		return b, true
	case c == 'n':
		return nil, d.literal("null")
	case c == '[':
		return d.values(elem, record)
	case c == '{':
		return d.anyObject(record)
	}
	return nil, false
}

// values decodes an array of values (see value).
func (d *decoder) values(elem Type, record []*Field) ([]any, bool) {
	// Nested arrays push their elements above this one's and pop them
	// before this one goes on.
	start := len(d.valueStack)
	ok := d.array(func() bool {
		v, ok := d.value(elem, record)
		d.valueStack = append(d.valueStack, v)
		return ok
	})
	vs := take(&d.valueSlab, len(d.valueStack)-start, 256)
	copy(vs, d.valueStack[start:])
	clear(d.valueStack[start:])
	d.valueStack = d.valueStack[:start]
	return vs, ok
}

// anyObject decodes an object of values, each normalized for the field
// of its name in fields, if any (see value); a repeated key keeps the last
// value, as encoding/json does.
func (d *decoder) anyObject(fields []*Field) (map[string]any, bool) {
	m := map[string]any{}
	ok := d.object(func(key []byte) bool {
		name := d.copy(key)
		f := fieldNamed(fields, name)
		v, ok := d.value(f.elem(), f.record())
		m[name] = v
		return ok
	})
	return m, ok
}

// fieldNamed returns the field of the given name, or nil.
func fieldNamed(fields []*Field, name string) *Field {
	for _, f := range fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// elem is the type of f's values, or of their elements for an array: the
// type that NormalizeValue goes by.
func (f *Field) elem() Type {
	switch {
	case f == nil:
		return ""
	case f.Type == Array:
		return f.Items
	}
	return f.Type
}

// record returns the fields of a record field's items, or nil.
func (f *Field) record() []*Field {
	if f == nil {
		return nil
	}
	return f.Fields
}

func (d *decoder) services(out *[]*Service) bool {
	list := []*Service{}
	*out = list
	if d.peek() != '[' {
		return false
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return true
	}
	other := d.otherHalf()
	ok, met := d.serviceList(&list, other.start())
	if met {
		if r := <-other.done; r.ok {
			list = append(list, r.services...)
			d.i, d.otherSums = r.end, r.sums
			d.halves++
		} else {
			ok, _ = d.serviceList(&list, -1)
		}
	}
	*out = list
	return ok
}

// serviceList decodes the services of the services array, and its closing
// bracket, or stops at the service that starts at stop.
func (d *decoder) serviceList(list *[]*Service, stop int) (ok, stopped bool) {
	for {
		s := &Service{}
		*list = append(*list, s)
		if !d.service(s) {
			return false, false
		}
		switch d.peek() {
		case ',':
			d.i++
			if d.peek() != 0 && d.i == stop {
				return true, true
			}
		case ']':
			d.i++
			return true, false
		default:
			return false, false
		}
	}
}

// parallelBytes is the size from which the services of a catalog file
// are decoded in two halves at once, when there are two CPUs or more.
var parallelBytes = 512 << 10

// A half is the second half of a services array, decoded by a decoder of
// its own from start to the array's closing bracket.
type half struct {
	at   int
	done chan halfResult
}

type halfResult struct {
	services []*Service
	sums     []toolSum
	end      int // after the closing bracket
	ok       bool
}

func (h *half) start() int {
	if h == nil {
		return -1
	}
	return h.at
}

// serviceStart is how a service other than the first starts in the file
// that Marshal writes: after the comma that ends the one before, on a line
// of its own at depth 2.
var serviceStart = []byte(",\n    {\"name\":")

// otherHalf starts decoding, at once, the services from the first one that
// starts after the middle of what is left. It is a guess: when the
// decoder does not meet that service's start as the start of an element
// of the array, as in a file that Marshal did not write, it decodes on
// and the other half's work is dropped.
func (d *decoder) otherHalf() *half {
	rest := len(d.data) - d.i
	if rest < parallelBytes || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	mid := d.i + rest/2
	j := bytes.Index(d.data[mid:], serviceStart)
	if j < 0 {
		return nil
	}
	h := &half{at: mid + j + len(",\n    "), done: make(chan halfResult, 1)}
	go func() {
		e := &decoder{data: d.data, i: h.at, hash: newHasher()}
		var r halfResult
		r.ok, _ = e.serviceList(&r.services, -1)
		r.end = e.i
		r.sums = e.hash.wait()
		h.done <- r
	}()
	return h
}

func (d *decoder) service(s *Service) bool {
	seen := 0
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return d.once(&seen, 1<<0) && d.string(&s.Name)
		case "version":
			return d.once(&seen, 1<<1) && d.string(&s.Version)
		case "description":
			return d.once(&seen, 1<<2) && d.string(&s.Description)
		case "dir":
			return d.once(&seen, 1<<3) && d.string(&s.Dir)
		case "handler":
			return d.once(&seen, 1<<4) && d.string(&s.Handler)
		case "mcpTitle":
			return d.once(&seen, 1<<5) && d.string(&s.MCPTitle)
		case "tools":
			return d.once(&seen, 1<<6) && d.tools(&s.Tools)
		case "pos":
			return d.once(&seen, 1<<7) && d.pos(&s.Pos)
		case "scopes":
			return d.once(&seen, 1<<8) && d.strings(&s.Scopes)
		case "groups":
			return d.once(&seen, 1<<9) && d.groups(&s.Groups)
		case "upstream":
			s.Upstream = &Upstream{}
			return d.once(&seen, 1<<10) && d.upstream(s.Upstream)
		case "prompts":
			return d.once(&seen, 1<<11) && d.viaJSON(&s.Prompts) && normalizeEntries(s) == nil
		case "resources":
			return d.once(&seen, 1<<12) && d.viaJSON(&s.Resources) && normalizeEntries(s) == nil
		case "skills":
			return d.once(&seen, 1<<13) && d.viaJSON(&s.Skills) && normalizeEntries(s) == nil
		}
		return false
	})
}

// viaJSON decodes the value at d.i with encoding/json, as decodeSlow
// decodes the whole file (unknown keys refused, numbers kept as
// json.Number): prompts and resources are few, and not worth a decoder of
// their own.
func (d *decoder) viaJSON(out any) bool {
	d.ws()
	dec := json.NewDecoder(bytes.NewReader(d.data[d.i:]))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil || len(raw) == 0 || raw[0] != '[' {
		return false
	}
	d.i += int(dec.InputOffset())
	return jsonfile.Strict(raw, out) == nil
}

func (d *decoder) groups(out *[]*Group) bool {
	list := []*Group{}
	ok := d.array(func() bool {
		g := &Group{}
		list = append(list, g)
		seen := 0
		return d.object(func(key []byte) bool {
			switch string(key) {
			case "name":
				return d.once(&seen, 1<<0) && d.string(&g.Name)
			case "description":
				return d.once(&seen, 1<<1) && d.string(&g.Description)
			case "deferred":
				return d.once(&seen, 1<<2) && d.bool(&g.Deferred)
			}
			return false
		})
	})
	*out = list
	return ok
}

func (d *decoder) upstream(u *Upstream) bool {
	seen := 0
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "command":
			return d.once(&seen, 1<<0) && d.strings(&u.Command)
		case "url":
			return d.once(&seen, 1<<1) && d.string(&u.URL)
		case "dir":
			return d.once(&seen, 1<<2) && d.string(&u.Dir)
		case "env":
			return d.once(&seen, 1<<3) && d.valuesFrom(&u.Env)
		case "headers":
			return d.once(&seen, 1<<4) && d.valuesFrom(&u.Headers)
		case "startTimeout":
			return d.once(&seen, 1<<5) && d.string(&u.StartTimeout)
		case "callTimeout":
			return d.once(&seen, 1<<6) && d.string(&u.CallTimeout)
		case "checkInterval":
			return d.once(&seen, 1<<7) && d.string(&u.CheckInterval)
		}
		return false
	})
}

func (d *decoder) valuesFrom(out *[]ValueFrom) bool {
	return d.array(func() bool {
		var v ValueFrom
		seen := 0
		ok := d.object(func(key []byte) bool {
			switch string(key) {
			case "name":
				return d.once(&seen, 1<<0) && d.string(&v.Name)
			case "env":
				return d.once(&seen, 1<<1) && d.string(&v.Env)
			case "file":
				return d.once(&seen, 1<<2) && d.string(&v.File)
			case "prefix":
				return d.once(&seen, 1<<3) && d.string(&v.Prefix)
			}
			return false
		})
		*out = append(*out, v)
		return ok
	})
}

func (d *decoder) tools(out *[]*Tool) bool {
	list := []*Tool{}
	ok := d.array(func() bool {
		t := &take(&d.toolSlab, 1, 16)[0]
		list = append(list, t)
		if d.peek() != '{' {
			return false
		}
		d.inTool, d.mark = true, d.i
		if d.canon == nil {
			d.canon = d.hash.buffer()
		}
		ok := d.tool(t)
		d.skip(d.i, d.i)
		d.inTool = false
		d.canon = d.hash.endTool(d.canon)
		return ok
	})
	*out = list
	return ok
}

func (d *decoder) tool(t *Tool) bool {
	seen := 0
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return d.once(&seen, 1<<0) && d.string(&t.Name)
		case "fingerprint":
			return d.once(&seen, 1<<1) && d.blanked(&t.Fingerprint)
		case "description":
			return d.once(&seen, 1<<2) && d.string(&t.Description)
		case "title":
			return d.once(&seen, 1<<3) && d.string(&t.Title)
		case "deprecated":
			return d.once(&seen, 1<<4) && d.bool(&t.Deprecated)
		case "strict":
			return d.once(&seen, 1<<5) && d.bool(&t.Strict)
		case "annotations":
			return d.once(&seen, 1<<6) && d.annotations(&t.Annotations)
		case "request":
			return d.once(&seen, 1<<7) && d.message(&t.Request)
		case "response":
			t.Response = &Message{}
			return d.once(&seen, 1<<8) && d.message(t.Response)
		case "examples":
			// The examples are normalized for the request's fields.
			return seen&(1<<7) != 0 && d.once(&seen, 1<<9) && d.examples(&t.Examples, &t.Request)
		case "mcpName":
			return d.once(&seen, 1<<10) && d.string(&t.MCPName)
		case "pos":
			return d.once(&seen, 1<<11) && d.pos(&t.Pos)
		case "scopes":
			return d.once(&seen, 1<<12) && d.strings(&t.Scopes)
		case "group":
			return d.once(&seen, 1<<13) && d.string(&t.Group)
		case "deferred":
			return d.once(&seen, 1<<14) && d.bool(&t.Deferred)
		case "task":
			return d.once(&seen, 1<<15) && d.string(&t.Task) && validTask(t.Task)
		}
		return false
	})
}

// strings decodes an array of strings.
func (d *decoder) strings(out *[]string) bool {
	list := []string{}
	ok := d.array(func() bool {
		s, ok := d.str()
		list = append(list, s)
		return ok
	})
	*out = list
	return ok
}

func (d *decoder) examples(out *[]map[string]any, request *Message) bool {
	list := []map[string]any{}
	ok := d.array(func() bool {
		m, ok := d.anyObject(request.Fields)
		list = append(list, m)
		return ok
	})
	*out = list
	return ok
}

func (d *decoder) annotations(a *Annotations) bool {
	seen := 0
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "readOnly":
			return d.once(&seen, 1<<0) && d.optBool(&a.ReadOnly)
		case "destructive":
			return d.once(&seen, 1<<1) && d.optBool(&a.Destructive)
		case "idempotent":
			return d.once(&seen, 1<<2) && d.optBool(&a.Idempotent)
		case "openWorld":
			return d.once(&seen, 1<<3) && d.optBool(&a.OpenWorld)
		}
		return false
	})
}

func (d *decoder) message(m *Message) bool {
	seen := 0
	defer func() {
		if m.Fields == nil {
			m.Fields = []*Field{} // as normalize does
		}
	}()
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "description":
			return d.once(&seen, 1<<0) && d.string(&m.Description)
		case "fields":
			return d.once(&seen, 1<<1) && d.fields(&m.Fields)
		case "pos":
			return d.once(&seen, 1<<2) && d.pos(&m.Pos)
		}
		return false
	})
}

func (d *decoder) fields(out *[]*Field) bool {
	start := len(d.fieldStack)
	ok := d.array(func() bool {
		f := &take(&d.fieldSlab, 1, 64)[0]
		d.fieldStack = append(d.fieldStack, f)
		return d.field(f)
	})
	*out = take(&d.fieldPtrSlab, len(d.fieldStack)-start, 256)
	copy(*out, d.fieldStack[start:])
	d.fieldStack = d.fieldStack[:start]
	return ok
}

// take returns n elements of *slab, which it refills with a new chunk of
// at least size elements when it runs short, so that the decoder
// allocates in batches rather than element by element or slice by slice.
// The result's capacity is its length: an append copies it.
func take[T any](slab *[]T, n, size int) []T {
	if len(*slab) < n || *slab == nil {
		*slab = make([]T, max(n, size))
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

// The keys of a field whose values are normalized by its type.
const (
	typeSeen   = 1 << 1
	valuesSeen = 1<<6 | 1<<7 | 1<<8
)

func (d *decoder) field(f *Field) bool {
	seen := 0
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return d.once(&seen, 1<<0) && d.string(&f.Name)
		case "type":
			return d.once(&seen, 1<<1) && d.string((*string)(&f.Type))
		case "items":
			// Values are normalized by the type of the items: they come
			// first.
			return seen&valuesSeen == 0 && d.once(&seen, 1<<2) && d.string((*string)(&f.Items))
		case "description":
			return d.once(&seen, 1<<3) && d.string(&f.Description)
		case "required":
			return d.once(&seen, 1<<4) && d.bool(&f.Required)
		case "deprecated":
			return d.once(&seen, 1<<5) && d.bool(&f.Deprecated)
		case "fields":
			// The values of a record field are normalized for its fields:
			// they come first. Records are one level deep: a record's
			// field with fields is for Parse's slow path to refuse.
			return seen&valuesSeen == 0 && !d.inRecord && d.once(&seen, 1<<22) && d.recordFields(&f.Fields)
		case "default":
			var ok bool
			f.Default, ok = d.value(f.elem(), f.Fields)
			return seen&typeSeen != 0 && d.once(&seen, 1<<6) && ok && f.Default != nil
		case "enum":
			var ok bool
			f.Enum, ok = d.values(f.elem(), f.Fields)
			return seen&typeSeen != 0 && d.once(&seen, 1<<7) && ok
		case "examples":
			var ok bool
			f.Examples, ok = d.values(f.elem(), f.Fields)
			return seen&typeSeen != 0 && d.once(&seen, 1<<8) && ok
		case "minLength":
			return d.once(&seen, 1<<9) && d.int64(&f.MinLength)
		case "maxLength":
			return d.once(&seen, 1<<10) && d.int64(&f.MaxLength)
		case "pattern":
			return d.once(&seen, 1<<11) && d.string(&f.Pattern)
		case "format":
			return d.once(&seen, 1<<12) && d.string(&f.Format)
		case "minimum":
			return d.once(&seen, 1<<13) && d.float64(&f.Minimum)
		case "maximum":
			return d.once(&seen, 1<<14) && d.float64(&f.Maximum)
		case "exclusiveMinimum":
			return d.once(&seen, 1<<15) && d.float64(&f.ExclusiveMinimum)
		case "exclusiveMaximum":
			return d.once(&seen, 1<<16) && d.float64(&f.ExclusiveMaximum)
		case "minItems":
			return d.once(&seen, 1<<17) && d.int64(&f.MinItems)
		case "maxItems":
			return d.once(&seen, 1<<18) && d.int64(&f.MaxItems)
		case "uniqueItems":
			return d.once(&seen, 1<<19) && d.bool(&f.UniqueItems)
		case "pos":
			return d.once(&seen, 1<<20) && d.pos(&f.Pos)
		case "mcpHeader":
			return d.once(&seen, 1<<21) && d.string(&f.MCPHeader)
		case "object":
			return d.once(&seen, 1<<23) && d.bool(&f.Object)
		}
		return false
	})
}

// recordFields decodes the fields of a record's items.
func (d *decoder) recordFields(out *[]*Field) bool {
	d.inRecord = true
	defer func() { d.inRecord = false }()
	return d.fields(out)
}

func (d *decoder) pos(p *Pos) bool {
	if d.peek() != '"' {
		return false
	}
	quote := d.i
	raw, ok := d.rawKey()
	if !ok {
		// Escapes or non-ASCII text: decode the string first.
		d.i = quote
		var text string
		if !d.blanked(&text) {
			return false
		}
		*p, ok = parsePos(text)
		return ok
	}
	d.skip(quote+1, d.i-1)
	// Parse the file's own bytes, and copy the file name only when it is
	// not the last one's.
	*p, ok = parsePos(unsafe.String(unsafe.SliceData(raw), len(raw)))
	switch {
	case !ok || p.File == "":
		p.File = "" // not a view of data
	case p.File == d.lastFile:
		p.File = d.lastFile
	default:
		p.File = d.copy(raw[:len(p.File)])
		d.lastFile = p.File
	}
	return ok
}

// blanked decodes a string that the canonical form of a tool leaves empty.
func (d *decoder) blanked(out *string) bool {
	if d.peek() != '"' {
		return false
	}
	quote := d.i
	if !d.string(out) {
		return false
	}
	d.skip(quote+1, d.i-1)
	return true
}
