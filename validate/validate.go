// Package validate checks a tool's arguments, or any other flat message,
// against its catalog.Message: the one judgement of "does this value fit
// this field" in toolc. The runtime runs a Validator on every call's
// arguments and structured result before anything else sees them, and the
// compiler's default and example rules run the same code on the values a
// contract spells out, so that `toolc check` and `toolc serve` cannot
// disagree.
//
// NewValidator compiles a message once; Validator.Validate then checks raw
// JSON against it without decoding it into Go values, and returns the
// arguments with defaults applied, or a *ValidationError whose problems
// name their fields in words a model can act on.
package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/toolc/toolc/catalog"
)

// Validator checks the arguments of one tool's request, or any other flat
// message, before a handler sees them. Its verdicts are those of JSON Schema
// 2020-12 on the message's MCP projection (the tool's inputSchema), with
// format assertions on; it also rejects duplicate keys, reads empty input
// or null as {}, and reads null for an optional field as absent (so that
// its default applies), because the strict projections advertise optional
// fields as [T, "null"] and Gemini's mark them nullable.
//
// A Validator is immutable and safe for concurrent use.
type Validator struct {
	fields []*fieldSpec
	// byName finds a field by its wire name; slots and seed do it quicker
	// for most requests (see lookup).
	byName map[string]int
	slots  []int8
	seed   uint
	// defaultsLen is the length of every default's `,"name":value`.
	defaultsLen int
	// whole names the message as a whole in problems about it: "the
	// arguments" ("the arguments are not valid JSON"), or "the body" for
	// the envelope of POST /v1/call; wholeIs is its verb, "are" or "is".
	whole, wholeIs string
}

// fieldSpec is one field, compiled for checking.
type fieldSpec struct {
	name string
	// index is the field's place in the request.
	index int
	// quoted is the name quoted; subject is `field "name"`, for messages.
	quoted, subject string
	// kindText says what the field holds: "an integer", "an array of strings".
	kindText string
	// key is the field's name encoded as JSON, followed by a colon.
	key   []byte
	typ   catalog.Type
	items catalog.Type
	// t and it are typ and items as small numbers, quicker to switch on.
	t, it    fieldKind
	required bool
	// def is the default encoded as JSON; nil without one.
	def []byte
	// defText is the default as a contract shows it, for messages.
	defText string

	// strings
	minLen, maxLen int64 // -1 when unset
	re             *regexp.Regexp
	pattern        string
	format         *stringFormat
	strEnum        []string
	strEnumSet     map[string]struct{}

	// integers and numbers
	bounds  []numBound
	numEnum []jsonDecimal
	// intEnum is the enum when every value is an integer that fits an
	// int64; nil otherwise.
	intEnum []int64
	// decimalChecks says that a small integer needs the exact checks too:
	// a bound or an enum value is not such an integer.
	decimalChecks bool

	// enum, as a contract shows it, for messages
	enumText string
	hasEnum  bool

	// booleans
	boolEnum []bool

	// arrays
	minItems, maxItems int64 // -1 when unset
	unique             bool
	// record checks the items of a record field, objects of its fields.
	record *Validator

	// object limits a free-form (JSON) field to objects.
	object bool

	// msg holds the messages' fixed parts.
	msg fieldMessages
}

// fieldMessages are the fixed parts of a field's messages, made once:
// each is followed by the value or the count.
type fieldMessages struct {
	twice, missing                  string // whole
	typ                             string // `field "x" must be an integer, not `
	enum                            string
	minLen, maxLen, pattern, format string
	minItems, maxItems, item        string
	itemEnum                        string
	// moreBad follows the count of an array's bad items beyond those
	// described: " more items that are not strings".
	moreBad string
}

func (fs *fieldSpec) compileMessages() {
	m := &fs.msg
	m.twice = fs.subject + " is given more than once; give each field once"
	m.missing = "missing required field " + fs.quoted + " (" + fs.kindText + ")"
	m.typ = fs.subject + " must be " + fs.kindText + ", not "
	m.enum = fs.subject + " must be one of " + fs.enumText + ", not "
	m.minLen = fs.subject + " must be at least " + charCount(fs.minLen) + " long, not "
	m.maxLen = fs.subject + " must be at most " + charCount(fs.maxLen) + " long, not "
	m.pattern = fs.subject + " must match the regular expression " + fs.pattern + ", and "
	if fs.format != nil {
		m.format = fs.subject + " must be " + fs.format.hint + " (format " + fs.format.name + "), not "
	}
	m.minItems = fs.subject + " must have at least " + itemCount(fs.minItems) + ", not "
	m.maxItems = fs.subject + " must have at most " + itemCount(fs.maxItems) + ", not "
	m.item = " of " + fs.subject + " must be " + typeWords(fs.items) + ", not "
	m.itemEnum = " of " + fs.subject + " must be one of " + fs.enumText + ", not "
	m.moreBad = " more items that are not " + string(fs.items) + "s"
	if fs.record != nil {
		m.moreBad = " more items with problems"
	}
	for k := range fs.bounds {
		b := &fs.bounds[k]
		b.msg = fs.subject + " must be " + b.words() + " " + b.text + ", not "
	}
}

// numBound is one of minimum, maximum, exclusiveMinimum and exclusiveMaximum.
type numBound struct {
	kind numBoundKind
	d    jsonDecimal
	text string
	// i is the bound when isInt: an integer that fits an int64.
	i     int64
	isInt bool
	// msg is `field "x" must be at least 1, not `.
	msg string
}

type numBoundKind uint8

const (
	boundMinimum numBoundKind = iota
	boundMaximum
	boundExclusiveMinimum
	boundExclusiveMaximum
)

// holds reports whether a number that compares to the bound as c (-1, 0 or
// +1) is within it.
func (b *numBound) holds(c int) bool {
	switch b.kind {
	case boundMinimum:
		return c >= 0
	case boundMaximum:
		return c <= 0
	case boundExclusiveMinimum:
		return c > 0
	}
	return c < 0
}

func (b *numBound) words() string {
	switch b.kind {
	case boundMinimum:
		return "at least"
	case boundMaximum:
		return "at most"
	case boundExclusiveMinimum:
		return "greater than"
	}
	return "less than"
}

// fieldKind is a catalog.Type as a small number.
type fieldKind uint8

const (
	kindNone fieldKind = iota
	kindString
	kindInteger
	kindNumber
	kindBoolean
	kindArray
	// kindObject is the items kind of a record field.
	kindObject
	// kindJSON is a free-form field's: any JSON value, or a string that
	// holds one.
	kindJSON
	// kindRaw is any JSON value, copied as it is. No contract field has
	// it: see RawField.
	kindRaw
)

// The bounds of a free-form (JSON) value: its JSON text, as sent or as a
// string holds it, and the arrays and objects nested in it. The
// arguments as a whole are bounded too (maxArgsDepth, and the runtime's
// MaxArgumentBytes).
const (
	MaxJSONBytes = 256 << 10
	MaxJSONDepth = 32
)

func kindOf(t catalog.Type) fieldKind {
	switch t {
	case catalog.String:
		return kindString
	case catalog.Integer:
		return kindInteger
	case catalog.Number:
		return kindNumber
	case catalog.Boolean:
		return kindBoolean
	case catalog.Array:
		return kindArray
	case catalog.Object:
		return kindObject
	case catalog.JSON:
		return kindJSON
	}
	return kindNone
}

// An Option changes how NewValidator compiles a message.
type Option func(*options)

type options struct {
	whole, wholeIs string
	// raw maps the fields that take any JSON value to what they hold, in
	// words.
	raw map[string]string
}

// Naming names the message as a whole in problems about it, noun and
// verb: "the arguments" and "are" unless an option says otherwise ("the
// arguments are not valid JSON").
func Naming(noun, verb string) Option {
	return func(o *options) { o.whole, o.wholeIs = noun, verb }
}

// RawField makes the named field take any JSON value, copied as it is,
// whatever the type the message declares for it; what says what it holds,
// for messages ("an object, or a JSON string holding one"). It is for an
// envelope whose inner value another Validator checks, such as the
// arguments in the body of POST /v1/call. No contract field is raw.
func RawField(name, what string) Option {
	return func(o *options) {
		if o.raw == nil {
			o.raw = map[string]string{}
		}
		o.raw[name] = what
	}
}

// NewValidator compiles a request (or another flat message) for checking:
// its patterns as RE2 regular expressions, its enums, bounds and defaults.
// It fails on a message that the compiler would not have let through, such
// as a pattern that does not compile or a field of unknown type, and on an
// option that names a field the message does not have.
func NewValidator(req *catalog.Message, opts ...Option) (*Validator, error) {
	o := options{whole: "the arguments", wholeIs: "are"}
	for _, opt := range opts {
		opt(&o)
	}
	v := &Validator{byName: make(map[string]int, len(req.Fields)), whole: o.whole, wholeIs: o.wholeIs}
	for _, f := range req.Fields {
		fs, err := compileField(f)
		if err != nil {
			return nil, fmt.Errorf("field %q: %v", f.Name, err)
		}
		if _, dup := v.byName[f.Name]; dup {
			return nil, fmt.Errorf("field %q is declared twice", f.Name)
		}
		if what, ok := o.raw[f.Name]; ok {
			fs.t, fs.kindText = kindRaw, what
		}
		fs.compileMessages()
		fs.index = len(v.fields)
		v.byName[f.Name] = len(v.fields)
		v.fields = append(v.fields, fs)
		if fs.def != nil {
			v.defaultsLen += 1 + len(fs.key) + len(fs.def)
		}
	}
	for name := range o.raw {
		if _, ok := v.byName[name]; !ok {
			return nil, fmt.Errorf("RawField %q: the message has no such field", name)
		}
	}
	v.perfectHash()
	v.name(o.whole, o.wholeIs)
	return v, nil
}

// name names the message as a whole, in v and in its records' validators,
// which report a syntax error anywhere in the arguments.
func (v *Validator) name(whole, wholeIs string) {
	v.whole, v.wholeIs = whole, wholeIs
	for _, fs := range v.fields {
		if fs.record != nil {
			fs.record.name(whole, wholeIs)
		}
	}
}

// compileRecord compiles the fields of a record field's items, which are
// flat: a record in a record is refused.
func compileRecord(f *catalog.Field) (*Validator, error) {
	if len(f.Fields) == 0 {
		return nil, fmt.Errorf("a record needs fields")
	}
	v := &Validator{byName: make(map[string]int, len(f.Fields))}
	for _, sub := range f.Fields {
		if sub.IsRecord() || len(sub.Fields) > 0 {
			return nil, fmt.Errorf("field %q: a record inside a record; records are one level deep", sub.Name)
		}
		fs, err := compileField(sub)
		if err != nil {
			return nil, fmt.Errorf("field %q: %v", sub.Name, err)
		}
		if _, dup := v.byName[sub.Name]; dup {
			return nil, fmt.Errorf("field %q is declared twice", sub.Name)
		}
		fs.compileMessages()
		fs.index = len(v.fields)
		v.byName[sub.Name] = len(v.fields)
		v.fields = append(v.fields, fs)
		if fs.def != nil {
			v.defaultsLen += 1 + len(fs.key) + len(fs.def)
		}
	}
	v.perfectHash()
	return v, nil
}

func compileField(f *catalog.Field) (*fieldSpec, error) {
	key, _ := json.Marshal(f.Name)
	fs := &fieldSpec{
		name:     f.Name,
		quoted:   strconv.Quote(f.Name),
		subject:  "field " + strconv.Quote(f.Name),
		key:      append(key, ':'),
		typ:      f.Type,
		items:    f.Items,
		required: f.Required,
		object:   f.Object,
		minLen:   -1, maxLen: -1, minItems: -1, maxItems: -1,
	}
	fs.kindText = kindWords(fs)
	fs.t, fs.it = kindOf(f.Type), kindOf(f.Items)
	switch f.Type {
	case catalog.String, catalog.Integer, catalog.Number, catalog.Boolean:
	case catalog.JSON:
		if len(f.Enum) > 0 {
			return nil, fmt.Errorf("an enum on a JSON field")
		}
	case catalog.Array:
		switch f.Items {
		case catalog.String, catalog.Integer, catalog.Number, catalog.Boolean:
		case catalog.Object:
			rec, err := compileRecord(f)
			if err != nil {
				return nil, err
			}
			if f.UniqueItems {
				return nil, fmt.Errorf("uniqueItems on an array of records")
			}
			fs.record = rec
		case "":
			return nil, fmt.Errorf("an array needs items")
		default:
			return nil, fmt.Errorf("unknown items type %q", f.Items)
		}
	default:
		return nil, fmt.Errorf("unknown type %q", f.Type)
	}
	if len(f.Fields) > 0 && fs.record == nil {
		return nil, fmt.Errorf("fields on a field that is not a record (an array with items %q)", catalog.Object)
	}
	if f.Object && f.Type != catalog.JSON {
		return nil, fmt.Errorf("object on a field of type %q; it limits a JSON field to objects", f.Type)
	}
	if f.Default != nil {
		def, err := json.Marshal(f.Default)
		if err != nil {
			return nil, fmt.Errorf("default: %v", err)
		}
		fs.def = def
		fs.defText = catalog.FormatValue(f.Default)
	}
	// Keywords apply to values of their own JSON type only, as in JSON
	// Schema: a field's type decides which of them can ever apply.
	switch f.Type {
	case catalog.String:
		if f.MinLength != nil {
			fs.minLen = *f.MinLength
		}
		if f.MaxLength != nil {
			fs.maxLen = *f.MaxLength
		}
		if f.Pattern != "" {
			re, err := regexp.Compile(f.Pattern)
			if err != nil {
				return nil, fmt.Errorf("pattern: %v", err)
			}
			fs.re, fs.pattern = re, f.Pattern
		}
		if f.Format != "" {
			fs.format = stringFormats[f.Format]
			if fs.format == nil {
				return nil, fmt.Errorf("unknown format %q", f.Format)
			}
		}
	case catalog.Integer, catalog.Number:
		for _, b := range []struct {
			kind numBoundKind
			v    *float64
		}{
			{boundMinimum, f.Minimum}, {boundMaximum, f.Maximum},
			{boundExclusiveMinimum, f.ExclusiveMinimum}, {boundExclusiveMaximum, f.ExclusiveMaximum},
		} {
			if b.v == nil {
				continue
			}
			if math.IsNaN(*b.v) || math.IsInf(*b.v, 0) {
				return nil, fmt.Errorf("bound %v is not a JSON number", *b.v)
			}
			// The decimal that the schema carries, as encoding/json writes
			// it: the shortest that reads back as the same float64.
			text, _ := json.Marshal(*b.v)
			bd := numBound{kind: b.kind, d: parseDecimal(text), text: string(text)}
			bd.i, bd.isInt = bd.d.int64()
			fs.decimalChecks = fs.decimalChecks || !bd.isInt
			fs.bounds = append(fs.bounds, bd)
		}
	case catalog.Array:
		if f.MinItems != nil {
			fs.minItems = *f.MinItems
		}
		if f.MaxItems != nil {
			fs.maxItems = *f.MaxItems
		}
		fs.unique = f.UniqueItems
	}
	if len(f.Enum) > 0 {
		if err := fs.compileEnum(f.Enum); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

func (fs *fieldSpec) compileEnum(enum []any) error {
	fs.hasEnum = true
	fs.enumText = catalog.FormatValues(enum)
	typ := fs.typ
	if typ == catalog.Array {
		typ = fs.items // an array's enum is its items'
	}
	for _, e := range enum {
		switch typ {
		case catalog.String:
			s, ok := e.(string)
			if !ok {
				continue // never equal to a string
			}
			fs.strEnum = append(fs.strEnum, s)
		case catalog.Integer, catalog.Number:
			var text string
			switch x := e.(type) {
			case int64:
				text = strconv.FormatInt(x, 10)
			case int:
				text = strconv.Itoa(x)
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("enum value %v is not a JSON number", x)
				}
				b, _ := json.Marshal(x)
				text = string(b)
			case json.Number:
				if !isJSONNumber([]byte(x)) {
					return fmt.Errorf("enum value %q is not a JSON number", string(x))
				}
				text = string(x)
			default:
				continue
			}
			fs.numEnum = append(fs.numEnum, parseDecimal([]byte(text)))
		case catalog.Boolean:
			if b, ok := e.(bool); ok {
				fs.boolEnum = append(fs.boolEnum, b)
			}
		default:
			return fmt.Errorf("an enum on an array of %ss", typ)
		}
	}
	if len(fs.numEnum) > 0 {
		fs.intEnum = make([]int64, 0, len(fs.numEnum))
		for k := range fs.numEnum {
			x, ok := fs.numEnum[k].int64()
			if !ok {
				fs.intEnum = nil
				fs.decimalChecks = true
				break
			}
			fs.intEnum = append(fs.intEnum, x)
		}
	} else if fs.typ == catalog.Integer || fs.typ == catalog.Number {
		fs.intEnum = []int64{} // no number is equal to a value of another type
	}
	if len(fs.strEnum) > 8 {
		fs.strEnumSet = make(map[string]struct{}, len(fs.strEnum))
		for _, s := range fs.strEnum {
			fs.strEnumSet[s] = struct{}{}
		}
	}
	return nil
}

// isJSONNumber reports whether t is exactly one JSON number.
func isJSONNumber(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	end, ok := scanNumberAt(t, 0)
	return ok && end == len(t)
}

// lookup finds a field by name: through a perfect hash of the name's
// length and its first and last bytes when NewValidator found one, which
// is quicker than hashing the whole name; else through the map.
func (v *Validator) lookup(name []byte) (int, bool) {
	if v.slots == nil || len(name) == 0 {
		i, ok := v.byName[string(name)]
		return i, ok
	}
	i := v.slots[slotHash(len(name), name[0], name[len(name)-1], v.seed)&uint(len(v.slots)-1)]
	if i < 0 || v.fields[i].name != string(name) {
		return -1, false
	}
	return int(i), true
}

func slotHash(n int, first, last byte, seed uint) uint {
	return (uint(n)*seed^uint(first))*(seed|1)>>3 ^ uint(last)*(seed>>7|1)
}

// perfectHash looks for a seed under which slotHash sends every field to a
// slot of its own, in a table at most 256 long.
func (v *Validator) perfectHash() {
	if len(v.fields) == 0 || len(v.fields) > 64 {
		return
	}
	for _, fs := range v.fields {
		if fs.name == "" {
			return
		}
	}
	size := 8
	for size < 4*len(v.fields) {
		size *= 2
	}
	slots := make([]int8, size)
	for seed := uint(0x9E3779B1); seed < 0x9E3779B1+64; seed++ {
		for k := range slots {
			slots[k] = -1
		}
		ok := true
		for i, fs := range v.fields {
			h := slotHash(len(fs.name), fs.name[0], fs.name[len(fs.name)-1], seed) & uint(size-1)
			if slots[h] >= 0 {
				ok = false
				break
			}
			slots[h] = int8(i)
		}
		if ok {
			v.slots, v.seed = slots, seed
			return
		}
	}
}

// ValidationError is what Validate returns for arguments that break the
// contract: every problem it found, each naming its field.
type ValidationError struct {
	Problems []Problem
	// text is what Error returns, when Validate made the error.
	text string
}

// Problem is one thing wrong with the arguments.
type Problem struct {
	// Field is the name of the field that the problem is about, as the
	// arguments spell it; empty when it is about the arguments as a whole,
	// such as JSON that does not parse.
	Field string
	// Message is a sentence that says what is wrong, names the field, and
	// that a model can act on.
	Message string
}

// Error lists every problem, separated by semicolons.
func (e *ValidationError) Error() string {
	if e.text != "" {
		return e.text
	}
	switch len(e.Problems) {
	case 0:
		return "invalid arguments"
	case 1:
		return e.Problems[0].Message
	}
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}
