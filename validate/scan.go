package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/jsondepth"
)

// maxArgsDepth bounds the nesting of arrays and objects in arguments. A flat
// request needs two levels (the object and an array field); anything deeper
// is a wrong type anyway, and the limit keeps skipping it cheap.
const maxArgsDepth = 64

// minMessages is the least room made for problems' messages.
const minMessages = 256

// maxItemProblems bounds how many bad items of one array are described.
const maxItemProblems = 5

// argsCheck is the state of one Validate call. It lives on Validate's
// stack.
type argsCheck struct {
	v    *Validator
	data []byte
	// out is the output, written up to n. Writing the length alone keeps
	// the hot path free of pointer writes (and GC write barriers).
	out []byte
	n   int
	// same says that the output so far is data[:n], and out is not made
	// yet: arguments already in the output's form cost no copy, and
	// invalid ones no output at all.
	same bool
	// keys holds the items of a uniqueItems array, as comparison keys, and
	// ends their ends.
	keys []byte
	ends []int
	// seen marks the fields given: a bit for each of the first 64, and
	// seenMore for the others.
	seen     uint64
	seenMore []bool

	// msgs holds the problems' messages, one after the other, up to mn, and
	// pend (then pendMore, beyond eight problems) where each starts;
	// Validate cuts them apart at the end, so that all messages take one
	// allocation. Once there is a problem there is no output.
	msgs []byte
	mn   int
	// failure holds the error, its first problems and the first messages:
	// an invalid call allocates it and little else.
	failure  *failure
	pend     [8]pendingProblem
	npend    int
	pendMore []pendingProblem
	// listed is set once an unknown field's message lists the fields.
	listed bool
	// failed is set on the first problem.
	failed bool
	// unknowns counts the unknown fields.
	unknowns int

	// While an item of a record field is checked, c.v is the record's
	// validator, rec the record field and index the item's index.
	rec   *fieldSpec
	index int
}

// Validate checks raw JSON arguments against the request. The arguments
// must be a JSON object; empty input and null mean {}, and null for an
// optional field means the field is absent. It returns the
// arguments with the default of every absent optional field added, as
// compact JSON: fields in the order given, then the defaults in the order
// the request declares them. Integer fields are written as plain integers
// (2.0 becomes 2) when they fit an int64.
//
// When the arguments are already in that form, the result is args itself
// (without any white space that follows the object), not a copy.
//
// When the arguments break the request, the error is a *ValidationError
// that lists every problem in words a model can act on.
func (v *Validator) Validate(args []byte) ([]byte, error) {
	c := argsCheck{v: v, data: args, same: true}
	if len(v.fields) > 64 {
		c.seenMore = make([]bool, len(v.fields)-64)
	}
	c.run()
	if c.npend > 0 {
		return nil, c.err()
	}
	if c.same {
		return args[:c.n:c.n], nil
	}
	return c.out[:c.n:c.n], nil
}

// CheckValue checks one JSON value against one field with the code that
// Validate checks the field's value in arguments with, so that the two
// cannot disagree: the field's type, enum, bounds, lengths, pattern,
// format, items, counts and uniqueness. null is no value of any field here
// (in arguments it means an optional field is absent). subject names the
// value in the messages, where Validate says `field "name"`: the compiler
// passes `default of request field "to" of tool "notify"`.
//
// It returns nil, a *ValidationError with every problem, or the error of a
// field that NewValidator would refuse.
func CheckValue(f *catalog.Field, subject string, value []byte) error {
	fs, err := compileField(f)
	if err != nil {
		return fmt.Errorf("field %q: %v", f.Name, err)
	}
	v := &Validator{fields: []*fieldSpec{fs}}
	v.name(subject, "is")
	// A value that fits, as a contract's defaults and examples mostly do,
	// needs no messages: they are made, and the value checked again, only
	// when it does not.
	if checkValue(v, value) == nil {
		return nil
	}
	fs.subject = subject
	fs.compileMessages()
	return checkValue(v, value)
}

// checkValue checks value against v's one field.
func checkValue(v *Validator, value []byte) error {
	fs := v.fields[0]
	c := argsCheck{v: v, data: value, same: true}
	if end := c.value(fs, skipJSONSpace(value, 0)); end >= 0 {
		if j := skipJSONSpace(value, end); j < len(value) {
			c.syntax(j, "more data follows the value")
		}
	}
	if c.npend > 0 {
		return c.err()
	}
	return nil
}

// diverge makes the output, at the first byte where it differs from the
// input, with room for n more bytes. It reports false once there is a
// problem: there is no output then.
func (c *argsCheck) diverge(n int) bool {
	c.same = false
	if c.failed {
		return false
	}
	// The output is at most as long as the input and the defaults, but for
	// rare rewrites, which grow it.
	c.out = make([]byte, max(len(c.data)+c.v.defaultsLen+2, c.n+n))
	copy(c.out, c.data[:c.n])
	return true
}

func (c *argsCheck) run() {
	d := c.data
	i := skipJSONSpace(d, 0)
	if i == len(d) {
		c.finish() // empty input: {}
		return
	}
	if d[i] == 'n' && bytes.HasPrefix(d[i:], []byte("null")) && skipJSONSpace(d, i+4) == len(d) {
		c.finish()
		return
	}
	if d[i] != '{' {
		start := i
		i = c.skip(i, 0)
		if i < 0 {
			return
		}
		if c.trailing(i) {
			c.beginArgs().say(c.v.whole).say(" must be a JSON object, not ").sayValue(start, i)
		}
		return
	}
	i = c.object(i)
	if i >= 0 {
		c.trailing(i)
	}
}

// object checks the object that starts at i against c.v's fields (the
// arguments, or an item of a record field), and copies it to the output
// with the defaults of absent optional fields added. It returns the index
// after the object, or -1 on a syntax error.
func (c *argsCheck) object(i int) int {
	d := c.data
	c.putByte('{')
	n := 0 // fields written
	i = skipJSONSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		i++
	} else {
		for {
			if i >= len(d) {
				c.syntax(i, "the object is not closed with '}'")
				return -1
			}
			if d[i] != '"' {
				c.syntax(i, "expected a field name in double quotes")
				return -1
			}
			keyStart := i
			var keyBuf [64]byte
			var flags strFlags
			i, flags = c.scanString(i)
			if i < 0 {
				return -1
			}
			key := d[keyStart+1 : i-1]
			if flags != 0 {
				key, _ = decodeString(keyBuf[:0], key, flags)
			}
			i = skipJSONSpace(d, i)
			if i >= len(d) || d[i] != ':' {
				c.syntax(i, "expected ':' after the field name")
				return -1
			}
			i = skipJSONSpace(d, i+1)
			fi, known := c.v.lookup(key)
			switch {
			case !known:
				c.unknown(key)
				i = c.skip(i, c.depth()+1)
			case c.isSeen(fi):
				fs := c.v.fields[fi]
				c.beginField(fs).say(fs.msg.twice)
				i = c.skip(i, c.depth()+1)
			default:
				c.markSeen(fi)
				fs := c.v.fields[fi]
				if !fs.required && isNull(d, i) {
					// null for an optional field means absent, because the
					// strict projections advertise such a field as
					// [T, "null"] and Gemini's as nullable: its default, if
					// any, takes the null's place, and otherwise the field
					// is left out.
					i += len("null")
					if fs.def != nil {
						if n > 0 {
							c.putByte(',')
						}
						n++
						c.put(fs.key)
						c.put(fs.def)
					}
					break
				}
				if n > 0 {
					c.putByte(',')
				}
				n++
				c.put(fs.key)
				i = c.value(fs, i)
			}
			if i < 0 {
				return -1
			}
			i = skipJSONSpace(d, i)
			if i < len(d) && d[i] == ',' {
				i = skipJSONSpace(d, i+1)
				continue
			}
			if i < len(d) && d[i] == '}' {
				i++
				break
			}
			c.syntax(i, "expected ',' or '}' after a field's value")
			return -1
		}
	}
	c.finishFields(n)
	return i
}

// isNull reports whether the value at i is null.
func isNull(d []byte, i int) bool {
	return len(d)-i >= 4 && string(d[i:i+4]) == "null"
}

func (c *argsCheck) isSeen(fi int) bool {
	if fi < 64 {
		return c.seen&(1<<fi) != 0
	}
	return c.seenMore[fi-64]
}

func (c *argsCheck) markSeen(fi int) {
	if fi < 64 {
		c.seen |= 1 << fi
	} else {
		c.seenMore[fi-64] = true
	}
}

// finish completes arguments given as empty input or null.
func (c *argsCheck) finish() {
	c.n = 0
	c.putByte('{')
	c.finishFields(0)
}

// finishFields reports missing required fields and appends the defaults of
// absent optional ones, closing the object.
func (c *argsCheck) finishFields(n int) {
	for fi, fs := range c.v.fields {
		if c.isSeen(fi) {
			continue
		}
		if fs.required {
			c.beginField(fs).say(fs.msg.missing)
			continue
		}
		if fs.def != nil {
			if n > 0 {
				c.putByte(',')
			}
			n++
			c.put(fs.key)
			c.put(fs.def)
		}
	}
	c.putByte('}')
}

// trailing checks that nothing but white space follows the value ending at i.
func (c *argsCheck) trailing(i int) bool {
	if j := skipJSONSpace(c.data, i); j < len(c.data) {
		c.reset()
		c.beginArgs().say(c.v.whole).say(" must be one JSON object, but more data follows it").at(j)
		return false
	}
	return true
}

func (c *argsCheck) put(b []byte) {
	if c.same {
		if c.n+len(b) <= len(c.data) && string(c.data[c.n:c.n+len(b)]) == string(b) {
			c.n += len(b)
			return
		}
		if !c.diverge(len(b)) {
			return
		}
	}
	if c.n+len(b) > len(c.out) && !c.grow(len(b)) {
		return
	}
	c.n += copy(c.out[c.n:], b)
}

func (c *argsCheck) putByte(ch byte) {
	if c.same {
		if c.n < len(c.data) && c.data[c.n] == ch {
			c.n++
			return
		}
		if !c.diverge(1) {
			return
		}
	}
	if c.n == len(c.out) && !c.grow(1) {
		return
	}
	c.out[c.n] = ch
	c.n++
}

// putQuoted writes s, valid UTF-8, as a JSON string.
func (c *argsCheck) putQuoted(s []byte) {
	if c.same && !c.diverge(6*len(s)+2) {
		return
	}
	if c.n+6*len(s)+2 > len(c.out) && !c.grow(6*len(s)+2) {
		return
	}
	c.n += len(appendQuoted(c.out[c.n:c.n], s))
}

// grow makes room for n more bytes of output: rare, as the output is made
// as long as the input plus the defaults. Once there is a problem, the
// output is dropped, and grow reports false.
func (c *argsCheck) grow(n int) bool {
	if c.failed {
		return false
	}
	out := make([]byte, max(2*len(c.out), c.n+n))
	copy(out, c.out[:c.n])
	c.out = out
	return true
}

// pendingProblem is a problem whose message is msgs[start:end]. It holds
// no pointers, so that recording it needs no GC write barrier.
type pendingProblem struct {
	// field is the index of the field; fieldArgs for the arguments as a
	// whole; fieldUnknown for a name the request does not have, which
	// msgs[name:start] holds.
	field      int
	name       int
	start, end int
}

const (
	fieldArgs    = -1
	fieldUnknown = -2
)

// beginField starts a problem about a field; the say methods write its
// message.
func (c *argsCheck) beginField(fs *fieldSpec) *argsCheck {
	if c.rec != nil {
		return c.beginItem()
	}
	return c.begin(fs.index, 0)
}

// beginItem starts a problem about the item of a record field being
// checked: `item at index 2 of field "edits": `.
func (c *argsCheck) beginItem() *argsCheck {
	return c.begin(c.rec.index, 0).say("item at index ").sayInt(c.index).say(" of ").say(c.rec.subject).say(": ")
}

// beginArgs starts a problem about the arguments as a whole.
func (c *argsCheck) beginArgs() *argsCheck {
	return c.begin(fieldArgs, 0)
}

// beginUnknown starts a problem about a field the request does not have.
func (c *argsCheck) beginUnknown(name []byte) *argsCheck {
	c.openMessages()
	if c.npend > 0 {
		c.pendingAt(c.npend - 1).end = c.mn
		c.say("; ")
	}
	at := c.mn
	c.sayBytes(name)
	return c.begin(fieldUnknown, at)
}

// openMessages drops the output on the first problem, and makes room for
// the messages.
func (c *argsCheck) openMessages() {
	if !c.failed {
		c.failed = true
		c.out, c.n, c.same = nil, 0, false
		c.failure = new(failure)
		c.msgs = c.failure.msgs[:]
	}
}

func (c *argsCheck) begin(field, name int) *argsCheck {
	c.openMessages()
	if c.npend > 0 && field != fieldUnknown { // beginUnknown did this
		c.pendingAt(c.npend - 1).end = c.mn
		// The separator, so that the error's text is all of msgs.
		c.say("; ")
	}
	p := pendingProblem{field: field, name: name, start: c.mn}
	if c.pendMore == nil && c.npend < len(c.pend) {
		c.pend[c.npend] = p
	} else {
		if c.pendMore == nil {
			c.pendMore = make([]pendingProblem, len(c.pend), 4*len(c.pend))
			copy(c.pendMore, c.pend[:])
		}
		if len(c.pendMore) == cap(c.pendMore) {
			more := make([]pendingProblem, len(c.pendMore), 2*cap(c.pendMore))
			copy(more, c.pendMore)
			c.pendMore = more
		}
		// No append: a buffer that flows from c back into c would make
		// escape analysis move Validate's scratch buffer to the heap.
		c.pendMore = c.pendMore[:len(c.pendMore)+1]
		c.pendMore[len(c.pendMore)-1] = p
	}
	c.npend++
	return c
}

func (c *argsCheck) pendingAt(k int) *pendingProblem {
	if c.pendMore != nil {
		return &c.pendMore[k]
	}
	return &c.pend[k]
}

func (c *argsCheck) say(s string) *argsCheck {
	if c.mn+len(s) > len(c.msgs) {
		c.growMessages(len(s))
	}
	c.mn += copy(c.msgs[c.mn:], s)
	return c
}

func (c *argsCheck) sayBytes(b []byte) *argsCheck {
	if c.mn+len(b) > len(c.msgs) {
		c.growMessages(len(b))
	}
	c.mn += copy(c.msgs[c.mn:], b)
	return c
}

func (c *argsCheck) growMessages(n int) {
	msgs := make([]byte, max(2*len(c.msgs), c.mn+n))
	copy(msgs, c.msgs[:c.mn])
	c.msgs = msgs
}

func (c *argsCheck) sayInt(n int) *argsCheck {
	var buf [20]byte
	return c.sayBytes(strconv.AppendInt(buf[:0], int64(n), 10))
}

// sayNumber writes a number's text, cut to 64 bytes.
func (c *argsCheck) sayNumber(t []byte) *argsCheck {
	if len(t) > 64 {
		return c.sayBytes(t[:64]).say("…")
	}
	return c.sayBytes(t)
}

// sayQuoted writes a string quoted, cut to 64 characters.
func (c *argsCheck) sayQuoted(s []byte) *argsCheck {
	const limit = 64
	n := 0
	for k := range len(s) {
		if utf8.RuneStart(s[k]) {
			if n == limit {
				return c.quote(s[:k]).say("…")
			}
			n++
		}
	}
	return c.quote(s)
}

// quote writes s quoted as Go does, which JSON reads too.
func (c *argsCheck) quote(s []byte) *argsCheck {
	plain := true
	for _, ch := range s {
		if !plainStringByte[ch] {
			plain = false
			break
		}
	}
	if plain {
		return c.say(`"`).sayBytes(s).say(`"`)
	}
	var buf [64]byte
	return c.sayBytes(strconv.AppendQuote(buf[:0], string(s)))
}

// reset drops every problem: JSON that does not parse is the only problem
// reported, and every caller stops at it.
func (c *argsCheck) reset() {
	c.mn, c.npend, c.pendMore, c.unknowns = 0, 0, nil, 0
}

// failure is what an invalid call allocates, in one piece.
type failure struct {
	err      ValidationError
	problems [4]Problem
	msgs     [minMessages]byte
}

// err cuts the messages apart. They share the buffer that they were
// written to, which nothing writes to any more.
func (c *argsCheck) err() *ValidationError {
	c.pendingAt(c.npend - 1).end = c.mn
	all := unsafe.String(unsafe.SliceData(c.msgs), c.mn)
	var e *ValidationError
	var ps []Problem
	if c.npend <= len(c.failure.problems) {
		e, ps = &c.failure.err, c.failure.problems[:c.npend:c.npend]
	} else {
		e, ps = new(ValidationError), make([]Problem, c.npend)
	}
	// The text is the messages and the separators between them, with the
	// names of unknown fields cut out.
	e.text = all
	if c.unknowns > 0 {
		var b strings.Builder
		for k := range c.npend {
			if k > 0 {
				b.WriteString("; ")
			}
			p := c.pendingAt(k)
			b.WriteString(all[p.start:p.end])
		}
		if c.unknowns > maxUnknown {
			b.WriteString("; ")
			b.WriteString(c.moreUnknown())
		}
		e.text = b.String()
	}
	for k := range ps {
		p := c.pendingAt(k)
		switch p.field {
		case fieldArgs:
		case fieldUnknown:
			ps[k].Field = all[p.name:p.start]
		default:
			ps[k].Field = c.v.fields[p.field].name
		}
		ps[k].Message = all[p.start:p.end]
	}
	if c.unknowns > maxUnknown {
		ps = append(ps, Problem{Message: c.moreUnknown()})
	}
	e.Problems = ps
	return e
}

// moreUnknown is the problem of the unknown fields past maxUnknown.
func (c *argsCheck) moreUnknown() string {
	return fmt.Sprintf("%d more fields are unknown", c.unknowns-maxUnknown)
}

// syntax reports JSON that does not parse; it replaces any other problem.
func (c *argsCheck) syntax(i int, msg string) {
	c.reset()
	c.beginArgs().say(c.v.whole).say(" ").say(c.v.wholeIs).say(" not valid JSON: ").say(msg).at(i)
}

// at says where offset i is in the input: ` at offset 12, near "x}"`.
func (c *argsCheck) at(i int) {
	if i >= len(c.data) {
		c.say(", but the input ends")
		return
	}
	c.say(" at offset ").sayInt(i).say(", near ")
	end := min(len(c.data), i+16)
	for end < len(c.data) && end > i && !utf8.RuneStart(c.data[end]) {
		end++
	}
	c.quote(c.data[i:end])
}

// value checks the value of a field that starts at i, and copies it to
// the output. It returns the index after the value, or -1 on a syntax
// error.
func (c *argsCheck) value(fs *fieldSpec, i int) int {
	d := c.data
	if i >= len(d) {
		c.syntax(i, "expected the field's value")
		return -1
	}
	ch := d[i]
	switch fs.t {
	case kindString:
		if ch == '"' {
			return c.stringValue(fs, i)
		}
	case kindInteger, kindNumber:
		if ch == '-' || ch >= '0' && ch <= '9' {
			return c.numberValue(fs, i)
		}
	case kindBoolean:
		if ch == 't' || ch == 'f' {
			end, ok := scanLiteral(d, i)
			if !ok {
				c.syntax(i, "expected a value")
				return -1
			}
			b := ch == 't'
			if fs.hasEnum && !containsBool(fs.boolEnum, b) {
				c.beginField(fs).say(fs.msg.enum).sayNumber(d[i:end])
			}
			c.put(d[i:end])
			return end
		}
	case kindArray:
		if ch == '[' {
			return c.arrayValue(fs, i)
		}
	case kindJSON:
		return c.jsonValue(fs, i)
	case kindRaw:
		end := c.skip(i, c.depth()+1)
		if end >= 0 {
			c.put(d[i:end])
		}
		return end
	}
	end := c.skip(i, c.depth()+1)
	if end < 0 {
		return -1
	}
	c.beginField(fs).say(fs.msg.typ).sayValue(i, end)
	return end
}

func containsBool(bs []bool, b bool) bool {
	for _, x := range bs {
		if x == b {
			return true
		}
	}
	return false
}

// kindWords says what a field holds: "a string", "an array of integers".
func kindWords(fs *fieldSpec) string {
	switch fs.typ {
	case catalog.JSON:
		if fs.object {
			return "a JSON object, or a string that holds one"
		}
		return "a JSON value"
	case catalog.Integer:
		return "an integer"
	case catalog.Array:
		return "an array of " + string(fs.items) + "s"
	}
	return "a " + string(fs.typ)
}

func typeWords(t catalog.Type) string {
	switch t {
	case catalog.Integer:
		return "an integer"
	case catalog.Object:
		return "an object"
	}
	return "a " + string(t)
}

// jsonValue checks the value of a free-form (JSON) field: any JSON value,
// or an object when the field says so, of at most MaxJSONBytes of JSON
// text nested at most MaxJSONDepth deep. A string that holds a JSON text
// (an object's, for an object field) stands for that value, as the strict
// projections and Gemini's send it, so the output holds the value itself
// and the handler sees it whatever the projection. A string that holds no
// JSON text is a string, the value itself, but for an object field, where
// it is a problem. The value is written compact.
func (c *argsCheck) jsonValue(fs *fieldSpec, i int) int {
	d := c.data
	if d[i] == '"' {
		end, flags := c.scanString(i)
		if end < 0 {
			return -1
		}
		s, repaired := decodeString(nil, d[i+1:end-1], flags)
		if text := bytes.Trim(s, " \t\r\n"); json.Valid(text) && (!fs.object || text[0] == '{') {
			if c.jsonBounds(fs, text) {
				c.putCompact(text)
			}
			return end
		}
		if fs.object {
			c.beginField(fs).say(fs.msg.typ).sayValue(i, end)
			return end
		}
		if c.jsonBounds(fs, d[i:end]) {
			if repaired {
				c.putQuoted(s)
			} else {
				c.put(d[i:end])
			}
		}
		return end
	}
	end := c.skip(i, c.depth()+1)
	if end < 0 {
		return -1
	}
	if fs.object && d[i] != '{' {
		c.beginField(fs).say(fs.msg.typ).sayValue(i, end)
		return end
	}
	if c.jsonBounds(fs, d[i:end]) {
		c.putCompact(d[i:end])
	}
	return end
}

// jsonBounds holds a free-form value's JSON text to MaxJSONBytes and
// MaxJSONDepth, and reports whether it is within them.
func (c *argsCheck) jsonBounds(fs *fieldSpec, text []byte) bool {
	if len(text) > MaxJSONBytes {
		c.beginField(fs).say(fs.subject).say(" holds ").sayInt(len(text)).say(" bytes of JSON; at most ").sayInt(MaxJSONBytes)
		return false
	}
	if jsondepth.Of(text) > MaxJSONDepth {
		c.beginField(fs).say(fs.subject).say(" is nested too deeply: more than ").sayInt(MaxJSONDepth).say(" levels of arrays and objects")
		return false
	}
	return true
}

// putCompact writes a valid JSON text without the white space between
// its tokens.
func (c *argsCheck) putCompact(text []byte) {
	if bytes.IndexAny(text, " \t\r\n") < 0 {
		c.put(text)
		return
	}
	var b bytes.Buffer
	b.Grow(len(text))
	if err := json.Compact(&b, text); err != nil {
		c.put(text) // cannot happen: the text is valid
		return
	}
	c.put(b.Bytes())
}

// stringValue checks a string field's value.
func (c *argsCheck) stringValue(fs *fieldSpec, i int) int {
	end, flags := c.scanString(i)
	if end < 0 {
		return -1
	}
	if flags != 0 {
		c.decodedStringValue(fs, i, end, flags)
		return end
	}
	c.put(c.data[i:end])
	c.checkString(fs, c.data[i+1:end-1], flags)
	return end
}

// decodedStringValue checks a string that has escapes or non-ASCII.
func (c *argsCheck) decodedStringValue(fs *fieldSpec, i, end int, flags strFlags) {
	s, repaired := decodeString(nil, c.data[i+1:end-1], flags)
	if repaired {
		c.putQuoted(s)
	} else {
		c.put(c.data[i:end])
	}
	c.checkString(fs, s, flags)
}

func (c *argsCheck) checkString(fs *fieldSpec, s []byte, flags strFlags) {
	if fs.hasEnum && !fs.inStrEnum(s) {
		c.beginField(fs).say(fs.msg.enum).sayQuoted(s)
	}
	if fs.minLen >= 0 || fs.maxLen >= 0 {
		n := int64(len(s))
		if flags != 0 {
			n = int64(utf8.RuneCount(s))
		}
		if fs.minLen >= 0 && n < fs.minLen {
			c.beginField(fs).say(fs.msg.minLen).sayInt(int(n))
		}
		if fs.maxLen >= 0 && n > fs.maxLen {
			c.beginField(fs).say(fs.msg.maxLen).sayInt(int(n))
		}
	}
	if fs.re != nil && !fs.re.Match(s) {
		c.beginField(fs).say(fs.msg.pattern).sayQuoted(s).say(" does not")
	}
	if fs.format != nil && !fs.format.check(string(s)) {
		c.beginField(fs).say(fs.msg.format).sayQuoted(s)
	}
}

func (fs *fieldSpec) inStrEnum(s []byte) bool {
	if fs.strEnumSet != nil {
		_, ok := fs.strEnumSet[string(s)]
		return ok
	}
	for _, e := range fs.strEnum {
		if e == string(s) {
			return true
		}
	}
	return false
}

func charCount(n int64) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.FormatInt(n, 10) + " characters"
}

// numberValue checks an integer or number field's value.
func (c *argsCheck) numberValue(fs *fieldSpec, i int) int {
	end, ok := scanNumberAt(c.data, i)
	if !ok {
		c.syntax(end, "invalid number")
		return -1
	}
	t := c.data[i:end]
	if x, ok := smallInt(t); ok {
		// Fast path: an integer that fits an int64, against integral bounds.
		c.put(t)
		if fs.hasEnum && fs.intEnum != nil && !slices.Contains(fs.intEnum, x) {
			c.beginField(fs).say(fs.msg.enum).sayNumber(t)
		}
		for k := range fs.bounds {
			b := &fs.bounds[k]
			if b.isInt && !b.holds(compareInts64(x, b.i)) {
				c.beginField(fs).say(b.msg).sayNumber(t)
			}
		}
		if fs.decimalChecks {
			c.numberChecks(fs, t, parseDecimal(t), true)
		}
		return end
	}
	dec := parseDecimal(t)
	if msg := outOfType(fs.t, t, &dec); msg != "" {
		c.beginField(fs).say(fs.subject).say(msg).sayNumber(t)
		return end
	}
	c.appendNumber(fs.t, t, &dec)
	c.numberChecks(fs, t, dec, false)
	return end
}

// outOfType says, as " must be ..., not ", why a number is no value of an
// integer or number field, or returns "". An integer field holds an int64,
// the type of its Go field, and a number field a float64: a number beyond
// them would pass JSON Schema and fail in the handler's decoder. Numbers
// are judged by their value, whatever their spelling: 0e99999999999999999999
// is 0, and 1e99999999999 is too large for both.
func outOfType(k fieldKind, t []byte, dec *jsonDecimal) string {
	switch {
	case k == kindInteger && !dec.isIntegral():
		return " must be an integer, not the number "
	case k == kindInteger:
		if _, ok := dec.int64(); !ok {
			return integerRangeMsg
		}
	case !dec.fitsFloat64(t):
		return numberRangeMsg
	}
	return ""
}

var (
	integerRangeMsg = " must be an integer " + catalog.IntegerRange + ", not "
	numberRangeMsg  = " must be a number within the range of a 64-bit float, at most 1.7976931348623157e308 either side of 0; not "
)

// numberChecks checks a number against the enum and the bounds, exactly.
// With onlyDecimal, only what the fast path leaves: the bounds that are not
// integers, and an enum with a non-integer.
func (c *argsCheck) numberChecks(fs *fieldSpec, t []byte, dec jsonDecimal, onlyDecimal bool) {
	if fs.hasEnum && (!onlyDecimal || fs.intEnum == nil) && !inNumEnum(fs.numEnum, &dec) {
		c.beginField(fs).say(fs.msg.enum).sayNumber(t)
	}
	for k := range fs.bounds {
		b := &fs.bounds[k]
		if onlyDecimal && b.isInt {
			continue
		}
		if !b.holds(dec.cmp(&b.d)) {
			c.beginField(fs).say(b.msg).sayNumber(t)
		}
	}
}

// smallInt reads a number written as a plain integer of at most 18 digits,
// other than -0.
func smallInt(t []byte) (int64, bool) {
	neg := t[0] == '-'
	if neg {
		t = t[1:]
	}
	if len(t) > 18 || neg && len(t) == 1 && t[0] == '0' {
		return 0, false
	}
	var x int64
	for _, ch := range t {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		x = x*10 + int64(ch-'0')
	}
	if neg {
		x = -x
	}
	return x, true
}

// appendNumber copies a number to the output; an integer written with a
// fraction or an exponent becomes a plain integer when it fits an int64.
func (c *argsCheck) appendNumber(k fieldKind, t []byte, dec *jsonDecimal) {
	if k == kindInteger && !plainInteger(t) {
		if n, ok := dec.int64(); ok {
			var buf [20]byte
			c.put(strconv.AppendInt(buf[:0], n, 10))
			return
		}
	}
	c.put(t)
}

func plainInteger(t []byte) bool {
	if len(t) == 2 && t[0] == '-' && t[1] == '0' {
		return false
	}
	for _, ch := range t {
		if ch == '.' || ch == 'e' || ch == 'E' {
			return false
		}
	}
	return true
}

func inNumEnum(enum []jsonDecimal, d *jsonDecimal) bool {
	for k := range enum {
		if enum[k].cmp(d) == 0 {
			return true
		}
	}
	return false
}

// arrayValue checks an array field's value.
func (c *argsCheck) arrayValue(fs *fieldSpec, i int) int {
	d := c.data
	c.putByte('[')
	i = skipJSONSpace(d, i+1)
	count, bad := 0, 0
	if fs.unique {
		c.keys, c.ends = c.keys[:0], c.ends[:0]
	}
	if i < len(d) && d[i] == ']' {
		i++
	} else {
		for {
			if i >= len(d) {
				c.syntax(i, "the array is not closed with ']'")
				return -1
			}
			if count > 0 {
				c.putByte(',')
			}
			var ok bool
			i, ok = c.item(fs, i, count, bad)
			if i < 0 {
				return -1
			}
			if !ok {
				bad++
			}
			count++
			i = skipJSONSpace(d, i)
			if i < len(d) && d[i] == ',' {
				i = skipJSONSpace(d, i+1)
				continue
			}
			if i < len(d) && d[i] == ']' {
				i++
				break
			}
			c.syntax(i, "expected ',' or ']' after an item")
			return -1
		}
	}
	c.putByte(']')
	if bad == 0 && (fs.minItems < 0 || int64(count) >= fs.minItems) && (fs.maxItems < 0 || int64(count) <= fs.maxItems) && (!fs.unique || count < 2) {
		return i
	}
	if bad > maxItemProblems {
		c.beginField(fs).say(fs.subject).say(" has ").sayInt(bad - maxItemProblems).say(fs.msg.moreBad)
	}
	if fs.minItems >= 0 && int64(count) < fs.minItems {
		c.beginField(fs).say(fs.msg.minItems).sayInt(count)
	}
	if fs.maxItems >= 0 && int64(count) > fs.maxItems {
		c.beginField(fs).say(fs.msg.maxItems).sayInt(count)
	}
	if fs.unique && bad == 0 && count > 1 {
		if a, b := c.duplicate(); a >= 0 {
			c.beginField(fs).say(fs.subject).say(" must have unique items, but the items at indexes ").sayInt(a).say(" and ").sayInt(b).say(" are equal")
		}
	}
	return i
}

func itemCount(n int64) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.FormatInt(n, 10) + " items"
}

// item checks one item of an array field. ok is false when the item is not
// of the items' type.
func (c *argsCheck) item(fs *fieldSpec, i, index, bad int) (end int, ok bool) {
	d := c.data
	ch := d[i]
	switch fs.it {
	case kindString:
		if ch == '"' {
			end, flags := c.scanString(i)
			if end < 0 {
				return -1, false
			}
			raw := d[i+1 : end-1]
			s, repaired := raw, false
			if flags != 0 {
				var buf [128]byte
				s, repaired = decodeString(buf[:0], raw, flags)
			}
			if repaired {
				c.putQuoted(s)
			} else {
				c.put(d[i:end])
			}
			if fs.unique {
				c.addKey(s)
			}
			if fs.hasEnum && !fs.inStrEnum(s) && bad < maxItemProblems {
				c.beginField(fs).say("item at index ").sayInt(index).say(fs.msg.itemEnum).sayQuoted(s)
			}
			return end, true
		}
	case kindInteger, kindNumber:
		if ch == '-' || ch >= '0' && ch <= '9' {
			end, ok := scanNumberAt(d, i)
			if !ok {
				c.syntax(end, "invalid number")
				return -1, false
			}
			t := d[i:end]
			if x, ok := smallInt(t); ok && !fs.unique {
				c.put(t)
				if fs.hasEnum && fs.intEnum != nil && !slices.Contains(fs.intEnum, x) && bad < maxItemProblems {
					c.beginField(fs).say("item at index ").sayInt(index).say(fs.msg.itemEnum).sayNumber(t)
				}
				return end, true
			}
			dec := parseDecimal(t)
			if msg := outOfType(fs.it, t, &dec); msg != "" {
				if bad < maxItemProblems {
					c.beginField(fs).say("item at index ").sayInt(index).say(" of ").say(fs.subject).say(msg).sayNumber(t)
				}
				return end, false
			}
			c.appendNumber(fs.it, t, &dec)
			if fs.unique {
				var buf [64]byte
				c.addKey(dec.appendKey(buf[:0]))
			}
			if fs.hasEnum && !inNumEnum(fs.numEnum, &dec) && bad < maxItemProblems {
				c.beginField(fs).say("item at index ").sayInt(index).say(fs.msg.itemEnum).sayNumber(t)
			}
			return end, true
		}
	case kindBoolean:
		if ch == 't' || ch == 'f' {
			end, ok := scanLiteral(d, i)
			if !ok {
				c.syntax(i, "expected a value")
				return -1, false
			}
			c.put(d[i:end])
			if fs.unique {
				c.addKey(d[i : i+1])
			}
			return end, true
		}
	case kindObject:
		if ch == '{' {
			return c.recordItem(fs, i, index, bad)
		}
	}
	end = c.skip(i, c.depth()+2)
	if end < 0 {
		return -1, false
	}
	c.itemProblem(fs, index, bad, i, end)
	return end, false
}

// depth is the nesting of the members of the object being checked: 0
// for the arguments, 2 for an item of a record field.
func (c *argsCheck) depth() int {
	if c.rec != nil {
		return 2
	}
	return 0
}

// recordItem checks an item of a record field, an object, against the
// record's fields. ok is false when it has problems; those of an array's
// items beyond the first maxItemProblems bad ones are dropped, and the
// array's check counts them.
func (c *argsCheck) recordItem(fs *fieldSpec, i, index, bad int) (end int, ok bool) {
	v, seen, seenMore := c.v, c.seen, c.seenMore
	mn, npend, listed := c.mn, c.npend, c.listed
	c.v, c.seen, c.seenMore = fs.record, 0, nil
	if len(fs.record.fields) > 64 {
		c.seenMore = make([]bool, len(fs.record.fields)-64)
	}
	c.rec, c.index = fs, index
	end = c.object(i)
	c.v, c.seen, c.seenMore = v, seen, seenMore
	c.rec, c.index = nil, 0
	if end < 0 {
		return -1, false
	}
	ok = c.npend == npend
	if !ok && bad >= maxItemProblems && npend > 0 {
		c.mn, c.npend, c.listed = mn, npend, listed
		if c.pendMore != nil {
			c.pendMore = c.pendMore[:npend]
		}
	}
	return end, ok
}

func (c *argsCheck) itemProblem(fs *fieldSpec, index, bad, start, end int) {
	if bad >= maxItemProblems {
		return
	}
	c.beginField(fs).say("item at index ").sayInt(index).say(fs.msg.item).sayValue(start, end)
}

// addKey records the comparison key of an array's item.
func (c *argsCheck) addKey(k []byte) {
	// No append, which would make escape analysis move Validate's scratch
	// buffer to the heap: see begin.
	if len(c.keys)+len(k) > cap(c.keys) {
		keys := make([]byte, len(c.keys), 2*cap(c.keys)+len(k)+64)
		copy(keys, c.keys)
		c.keys = keys
	}
	if len(c.ends) == cap(c.ends) {
		ends := make([]int, len(c.ends), 2*cap(c.ends)+8)
		copy(ends, c.ends)
		c.ends = ends
	}
	n := len(c.keys)
	c.keys = c.keys[:n+len(k)]
	copy(c.keys[n:], k)
	c.ends = c.ends[:len(c.ends)+1]
	c.ends[len(c.ends)-1] = len(c.keys)
}

// duplicate finds the first item equal to an earlier one, by the keys that
// item recorded: it returns the indexes of both, or -1, -1.
func (c *argsCheck) duplicate() (int, int) {
	n := len(c.ends)
	key := func(k int) []byte {
		start := 0
		if k > 0 {
			start = c.ends[k-1]
		}
		return c.keys[start:c.ends[k]]
	}
	if n <= 16 {
		for b := 1; b < n; b++ {
			kb := key(b)
			for a := 0; a < b; a++ {
				if bytes.Equal(key(a), kb) {
					return a, b
				}
			}
		}
		return -1, -1
	}
	first := make(map[string]int, n)
	for b := 0; b < n; b++ {
		kb := key(b)
		if a, ok := first[string(kb)]; ok {
			return a, b
		}
		first[string(kb)] = b
	}
	return -1, -1
}

// appendKey appends a key that is equal for equal numbers: sign, digits and
// exponent.
func (d *jsonDecimal) appendKey(b []byte) []byte {
	if d.n == 0 {
		return append(b, '0')
	}
	if d.neg {
		b = append(b, '-')
	}
	for _, ch := range d.m {
		if ch != '.' {
			b = append(b, ch)
		}
	}
	b = append(b, 'e')
	return strconv.AppendInt(b, d.exp, 10)
}

// maxUnknown is the most unknown fields that an error names; past it they
// are counted ("99984 more fields are unknown"). Each named one is held
// against those named before it, and named in the message: arguments of
// 40,000 unknown fields took 2 s to refuse (a 4 MiB request, minutes of
// CPU) and made a message larger than themselves.
const maxUnknown = 16

// unknown reports a field that the request does not have, with the field
// it was most likely meant to be.
func (c *argsCheck) unknown(name []byte) {
	if c.rec != nil {
		// In an item of a record field: the item's problem, with the
		// record's fields.
		c.beginItem().say("unknown field ").quote(name)
		if s := c.suggest(string(name)); s != "" {
			c.say("; did you mean ").say(c.v.fields[c.v.byName[s]].quoted).say("?")
		} else {
			c.say("; the fields of an item are ").say(c.v.fieldList())
		}
		return
	}
	if c.unknowns >= maxUnknown {
		c.unknowns++ // counted, not named: see maxUnknown
		return
	}
	for k := range c.npend {
		if p := c.pendingAt(k); p.field == fieldUnknown && string(c.msgs[p.name:p.start]) == string(name) {
			return // once is enough
		}
	}
	c.unknowns++
	c.beginUnknown(name).say("unknown field ").quote(name)
	switch {
	case len(c.v.fields) == 0:
		c.say("; this tool takes no arguments")
	default:
		if s := c.suggest(string(name)); s != "" {
			c.say("; did you mean ").say(c.v.fields[c.v.byName[s]].quoted).say("?")
		} else if !c.listed {
			// The list of fields once is enough.
			c.listed = true
			c.say("; the fields are ").say(c.v.fieldList())
		}
	}
}

func (v *Validator) fieldList() string {
	var b []byte
	for k, fs := range v.fields {
		switch {
		case k == 0:
		case k == len(v.fields)-1:
			b = append(b, " and "...)
		default:
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, fs.name)
	}
	return string(b)
}

// sayValue says what the value at data[start:end] is: "the string \"x\"",
// "the number 2.5", "an array".
func (c *argsCheck) sayValue(start, end int) *argsCheck {
	t := c.data[start:end]
	switch t[0] {
	case '"':
		raw := t[1 : len(t)-1]
		var flags strFlags
		for _, ch := range raw {
			if ch == '\\' {
				flags |= hasEscape
			} else if ch >= utf8.RuneSelf {
				flags |= nonASCII
			}
		}
		s := raw
		if flags != 0 {
			var buf [128]byte
			s, _ = decodeString(buf[:0], raw, flags)
		}
		return c.say("the string ").sayQuoted(s)
	case 't', 'f':
		return c.say("the boolean ").sayNumber(t)
	case 'n':
		return c.say("null")
	case '[':
		return c.say("an array")
	case '{':
		return c.say("an object")
	}
	return c.say("the number ").sayNumber(t)
}

// suggest finds the field that an unknown name most likely meant: one a
// letter or two away, or the same but for case and separators. It prefers
// fields not yet given.
func (c *argsCheck) suggest(name string) string {
	best, bestDist, bestSeen := "", 1<<30, true
	norm := normalizeName(name)
	for fi, fs := range c.v.fields {
		dist := editDistance(name, fs.name)
		if normalizeName(fs.name) == norm {
			dist = 0
		}
		limit := 2
		if len(fs.name) <= 4 || len(name) <= 4 {
			limit = 1
		}
		if dist > limit {
			continue
		}
		if dist < bestDist || dist == bestDist && bestSeen && !c.isSeen(fi) {
			best, bestDist, bestSeen = fs.name, dist, c.isSeen(fi)
		}
	}
	return best
}

func normalizeName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '_' || ch == '-' || ch == ' ':
		case ch >= 'A' && ch <= 'Z':
			b = append(b, ch+'a'-'A')
		default:
			b = append(b, ch)
		}
	}
	return string(b)
}

// editDistance is the optimal string alignment distance between a and b,
// case-insensitively: insertions, deletions, substitutions and swaps of
// adjacent letters.
func editDistance(a, b string) int {
	ra, rb := []rune(normalizeCase(a)), []rune(normalizeCase(b))
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func normalizeCase(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}

// ---- JSON scanning ----

// strFlags say what a string holds besides plain printable ASCII.
type strFlags uint8

const (
	hasEscape strFlags = 1 << iota
	nonASCII
)

// plainStringByte marks the bytes that a string holds as they are: printable ASCII
// but for the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for ch := 0x20; ch < 0x80; ch++ {
		t[ch] = ch != '"' && ch != '\\'
	}
	return t
}()

func skipJSONSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString scans the string that starts with the quote at i, and returns
// the index after its closing quote, or -1 after reporting a syntax error.
func (c *argsCheck) scanString(i int) (int, strFlags) {
	d := c.data
	var flags strFlags
	i++
	for {
		for i < len(d) && plainStringByte[d[i]] {
			i++
		}
		if i >= len(d) {
			c.syntax(i, "a string is not closed with '\"'")
			return -1, 0
		}
		switch ch := d[i]; {
		case ch == '"':
			return i + 1, flags
		case ch == '\\':
			flags |= hasEscape
			if i+1 >= len(d) {
				c.syntax(i+1, "a string is not closed with '\"'")
				return -1, 0
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(d) || !isHex(d[i+k]) {
						c.syntax(i, "\\u must be followed by four hexadecimal digits")
						return -1, 0
					}
				}
				i += 6
			default:
				c.syntax(i, "invalid escape in a string; JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
				return -1, 0
			}
		case ch < 0x20:
			c.syntax(i, "a control character in a string; escape it, as \\n, \\t or \\u00XX")
			return -1, 0
		default:
			flags |= nonASCII
			i++
		}
	}
}

// decodeString returns a string's contents with escapes resolved and
// invalid UTF-8 replaced by U+FFFD, as encoding/json reads it: raw itself
// when it needs neither, else appended to b. repaired says that something
// was replaced, so that the output must be encoded anew.
func decodeString(b, raw []byte, flags strFlags) (s []byte, repaired bool) {
	if flags&hasEscape == 0 && utf8.Valid(raw) {
		return raw, false
	}
	for r := 0; r < len(raw); {
		ch := raw[r]
		switch {
		case ch == '\\':
			switch raw[r+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(raw[r+2 : r+6])
				r += 6
				if utf16.IsSurrogate(rr) {
					var rr1 rune = -1
					if r+6 <= len(raw) && raw[r] == '\\' && raw[r+1] == 'u' {
						rr1 = hex4(raw[r+2 : r+6])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = utf8.RuneError
					repaired = true
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // " \ /
				b = append(b, raw[r+1])
			}
			r += 2
		case ch < utf8.RuneSelf:
			b = append(b, ch)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			if rr == utf8.RuneError && size == 1 {
				repaired = true
			}
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return b, repaired
}

func hex4(h []byte) rune {
	var r rune
	for _, ch := range h {
		r <<= 4
		switch {
		case ch >= '0' && ch <= '9':
			r |= rune(ch - '0')
		case ch >= 'a' && ch <= 'f':
			r |= rune(ch - 'a' + 10)
		default:
			r |= rune(ch - 'A' + 10)
		}
	}
	return r
}

// appendQuoted encodes s, valid UTF-8, as a JSON string.
func appendQuoted(b, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch == '\n':
			b = append(b, '\\', 'n')
		case ch == '\r':
			b = append(b, '\\', 'r')
		case ch == '\t':
			b = append(b, '\\', 't')
		case ch < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xF])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

// scanNumberAt scans the JSON number at i and returns the index after it.
// When it is malformed, ok is false and end is where it goes wrong.
func scanNumberAt(d []byte, i int) (end int, ok bool) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return i, false
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		i++
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	return i, true
}

// scanLiteral scans true, false or null at i.
func scanLiteral(d []byte, i int) (int, bool) {
	var lit string
	switch d[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	if len(d)-i >= len(lit) && string(d[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// skip scans over any JSON value at i, nested inside depth arrays and
// objects, and returns the index after it, or -1 after reporting a syntax
// error or nesting deeper than maxArgsDepth.
func (c *argsCheck) skip(i, depth int) int {
	d := c.data
	// stack holds a bit per open container: 1 for an object.
	var stack [maxArgsDepth/64 + 1]uint64
	n := 0
	for {
		// A value starts at i.
		i = skipJSONSpace(d, i)
		if i >= len(d) {
			c.syntax(i, "expected a value")
			return -1
		}
		switch ch := d[i]; {
		case ch == '{' || ch == '[':
			if depth+n+1 > maxArgsDepth {
				c.reset()
				c.beginArgs().say(c.v.whole).say(" ").say(c.v.wholeIs).say(" nested too deeply: more than ").sayInt(maxArgsDepth).say(" levels of arrays and objects")
				return -1
			}
			if ch == '{' {
				stack[n/64] |= 1 << (n % 64)
			} else {
				stack[n/64] &^= 1 << (n % 64)
			}
			n++
			i = skipJSONSpace(d, i+1)
			if i < len(d) && (ch == '{' && d[i] == '}' || ch == '[' && d[i] == ']') {
				n--
				i++
				break
			}
			if ch == '{' {
				if i = c.memberKey(i); i < 0 {
					return -1
				}
			}
			continue
		case ch == '"':
			if i, _ = c.scanString(i); i < 0 {
				return -1
			}
		case ch == '-' || ch >= '0' && ch <= '9':
			end, ok := scanNumberAt(d, i)
			if !ok {
				c.syntax(end, "invalid number")
				return -1
			}
			i = end
		case ch == 't' || ch == 'f' || ch == 'n':
			end, ok := scanLiteral(d, i)
			if !ok {
				c.syntax(i, "expected a value")
				return -1
			}
			i = end
		default:
			c.syntax(i, "expected a value")
			return -1
		}
		// A value ended at i: close containers until another value is due.
		for {
			if n == 0 {
				return i
			}
			i = skipJSONSpace(d, i)
			obj := stack[(n-1)/64]&(1<<((n-1)%64)) != 0
			if i < len(d) && d[i] == ',' {
				i++
				if obj {
					if i = c.memberKey(skipJSONSpace(d, i)); i < 0 {
						return -1
					}
				}
				break
			}
			if i < len(d) && (obj && d[i] == '}' || !obj && d[i] == ']') {
				n--
				i++
				continue
			}
			if obj {
				c.syntax(i, "expected ',' or '}' in an object")
			} else {
				c.syntax(i, "expected ',' or ']' in an array")
			}
			return -1
		}
	}
}

// memberKey scans `"key":` at i and returns the index after the colon.
func (c *argsCheck) memberKey(i int) int {
	d := c.data
	if i >= len(d) || d[i] != '"' {
		c.syntax(i, "expected a field name in double quotes")
		return -1
	}
	if i, _ = c.scanString(i); i < 0 {
		return -1
	}
	i = skipJSONSpace(d, i)
	if i >= len(d) || d[i] != ':' {
		c.syntax(i, "expected ':' after the field name")
		return -1
	}
	return i + 1
}
