package runtime

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolc/toolc/catalog"
)

// maxArgsDepth bounds the nesting of arrays and objects in arguments. A flat
// request needs two levels (the object and an array field); anything deeper
// is a wrong type anyway, and the limit keeps skipping it cheap.
const maxArgsDepth = 64

// maxItemProblems bounds how many bad items of one array are described.
const maxItemProblems = 5

// call is the state of one Validate call. It lives on Validate's stack.
type argsCheck struct {
	v    *Validator
	data []byte
	out  []byte
	// str holds a string decoded from escapes or repaired UTF-8.
	str []byte
	// keys holds the items of a uniqueItems array, as comparison keys, and
	// ends their ends.
	keys []byte
	ends []int
	// seen marks the fields given: a bit for each of the first 64, and
	// seenMore for the others.
	seen     uint64
	seenMore []bool

	problems []Problem
	// broken is set by a syntax error: the JSON does not parse, and that is
	// the only problem reported.
	broken bool
	// listed is set once an unknown field's message lists the fields.
	listed bool
}

// Validate checks raw JSON arguments against the request. The arguments
// must be a JSON object; empty input and null mean {}. It returns the
// arguments with the default of every absent optional field added, as
// compact JSON: fields in the order given, then the defaults in the order
// the request declares them. Integer fields are written as plain integers
// (2.0 becomes 2) when they fit an int64.
//
// When the arguments break the request, the error is a *ValidationError
// that lists every problem in words a model can act on.
func (v *Validator) Validate(args []byte) ([]byte, error) {
	c := argsCheck{v: v, data: args}
	if len(v.fields) > 64 {
		c.seenMore = make([]bool, len(v.fields)-64)
	}
	c.out = make([]byte, 0, len(args)+v.defaultsLen+2)
	c.run()
	if len(c.problems) > 0 {
		return nil, &ValidationError{Problems: c.problems}
	}
	return c.out, nil
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
			c.add("", "the arguments must be a JSON object, not "+c.describe(start, i))
		}
		return
	}
	c.out = append(c.out, '{')
	n := 0 // fields written
	i = skipJSONSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		i++
	} else {
		for {
			if i >= len(d) {
				c.syntax(i, "the object is not closed with '}'")
				return
			}
			if d[i] != '"' {
				c.syntax(i, "expected a field name in double quotes")
				return
			}
			keyStart := i
			var flags strFlags
			i, flags = c.scanString(i)
			if i < 0 {
				return
			}
			key := d[keyStart+1 : i-1]
			if flags != 0 {
				key, _ = c.decode(key, flags)
			}
			i = skipJSONSpace(d, i)
			if i >= len(d) || d[i] != ':' {
				c.syntax(i, "expected ':' after the field name")
				return
			}
			i = skipJSONSpace(d, i+1)
			fi, known := c.v.lookup(key)
			switch {
			case !known:
				c.unknown(string(key))
				i = c.skip(i, 1)
			case c.isSeen(fi):
				c.add(string(key), "field "+strconv.Quote(string(key))+" is given more than once; give each field once")
				i = c.skip(i, 1)
			default:
				c.markSeen(fi)
				fs := c.v.fields[fi]
				if n > 0 {
					c.out = append(c.out, ',')
				}
				n++
				c.out = append(c.out, fs.key...)
				i = c.value(fs, i)
			}
			if i < 0 {
				return
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
			return
		}
	}
	if !c.trailing(i) {
		return
	}
	c.finishFields(n)
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
	c.out = append(c.out[:0], '{')
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
			c.add(fs.name, "missing required field "+strconv.Quote(fs.name)+" ("+kindWords(fs)+")")
			continue
		}
		if fs.def != nil {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			n++
			c.out = append(c.out, fs.key...)
			c.out = append(c.out, fs.def...)
		}
	}
	c.out = append(c.out, '}')
}

// trailing checks that nothing but white space follows the value ending at i.
func (c *argsCheck) trailing(i int) bool {
	if j := skipJSONSpace(c.data, i); j < len(c.data) {
		c.broken = true
		c.problems = append(c.problems[:0], Problem{Message: "the arguments must be one JSON object, but more data follows it" + c.at(j)})
		return false
	}
	return true
}

func (c *argsCheck) add(field, msg string) {
	c.problems = append(c.problems, Problem{Field: field, Message: msg})
}

// syntax reports JSON that does not parse; it replaces any other problem.
func (c *argsCheck) syntax(i int, msg string) {
	c.broken = true
	c.problems = append(c.problems[:0], Problem{Message: "the arguments are not valid JSON: " + msg + c.at(i)})
}

// at says where offset i is in the input: ` at offset 12, near "x}"`.
func (c *argsCheck) at(i int) string {
	if i >= len(c.data) {
		return ", but the input ends"
	}
	b := []byte(" at offset ")
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, ", near "...)
	end := min(len(c.data), i+16)
	for end < len(c.data) && end > i && !utf8.RuneStart(c.data[end]) {
		end++
	}
	return string(strconv.AppendQuote(b, string(c.data[i:end])))
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
	switch fs.typ {
	case catalog.String:
		if ch == '"' {
			return c.stringValue(fs, i)
		}
	case catalog.Integer, catalog.Number:
		if ch == '-' || ch >= '0' && ch <= '9' {
			return c.numberValue(fs, i)
		}
	case catalog.Boolean:
		if ch == 't' || ch == 'f' {
			end, ok := scanLiteral(d, i)
			if !ok {
				c.syntax(i, "expected a value")
				return -1
			}
			b := ch == 't'
			if fs.hasEnum && !containsBool(fs.boolEnum, b) {
				c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be one of "+fs.enumText+", not "+string(d[i:end]))
			}
			c.out = append(c.out, d[i:end]...)
			return end
		}
	case catalog.Array:
		if ch == '[' {
			return c.arrayValue(fs, i)
		}
	}
	end := c.skip(i, 1)
	if end < 0 {
		return -1
	}
	msg := "field " + strconv.Quote(fs.name) + " must be " + kindWords(fs) + ", not " + c.describe(i, end)
	if d[i] == 'n' && !fs.required {
		if fs.def != nil {
			msg += "; leave it out to use the default, " + fs.defText
		} else {
			msg += "; leave it out instead"
		}
	}
	c.add(fs.name, msg)
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
	case catalog.Integer:
		return "an integer"
	case catalog.Array:
		return "an array of " + string(fs.items) + "s"
	}
	return "a " + string(fs.typ)
}

func typeWords(t catalog.Type) string {
	if t == catalog.Integer {
		return "an integer"
	}
	return "a " + string(t)
}

// stringValue checks a string field's value.
func (c *argsCheck) stringValue(fs *fieldSpec, i int) int {
	end, flags := c.scanString(i)
	if end < 0 {
		return -1
	}
	raw := c.data[i+1 : end-1]
	s, repaired := raw, false
	if flags != 0 {
		s, repaired = c.decode(raw, flags)
	}
	if repaired {
		c.out = appendQuoted(c.out, s)
	} else {
		c.out = append(c.out, c.data[i:end]...)
	}
	c.checkString(fs, s, flags)
	return end
}

func (c *argsCheck) checkString(fs *fieldSpec, s []byte, flags strFlags) {
	if fs.hasEnum && !fs.inStrEnum(s) {
		c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be one of "+fs.enumText+", not "+quoteShort(s))
	}
	if fs.minLen >= 0 || fs.maxLen >= 0 {
		n := int64(len(s))
		if flags != 0 {
			n = int64(utf8.RuneCount(s))
		}
		if fs.minLen >= 0 && n < fs.minLen {
			c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be at least "+charCount(fs.minLen)+" long, not "+strconv.FormatInt(n, 10))
		}
		if fs.maxLen >= 0 && n > fs.maxLen {
			c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be at most "+charCount(fs.maxLen)+" long, not "+strconv.FormatInt(n, 10))
		}
	}
	if fs.re != nil && !fs.re.Match(s) {
		c.add(fs.name, "field "+strconv.Quote(fs.name)+" must match the regular expression "+fs.pattern+", and "+quoteShort(s)+" does not")
	}
	if fs.format != nil && !fs.format.check(string(s)) {
		c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be "+fs.format.hint+" (format "+fs.format.name+"), not "+quoteShort(s))
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
		c.out = append(c.out, t...)
		if fs.hasEnum && fs.intEnum != nil && !slices.Contains(fs.intEnum, x) {
			c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be one of "+fs.enumText+", not "+string(t))
		}
		for k := range fs.bounds {
			b := &fs.bounds[k]
			if b.isInt && !b.holds(compareInts64(x, b.i)) {
				c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be "+b.words()+" "+b.text+", not "+string(t))
			}
		}
		if fs.decimalChecks {
			c.numberChecks(fs, t, parseDecimal(t), true)
		}
		return end
	}
	dec := parseDecimal(t)
	if fs.typ == catalog.Integer && !dec.isInteger() {
		c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be an integer, not the number "+shortText(t))
		return end
	}
	c.appendNumber(fs.typ, t, &dec)
	c.numberChecks(fs, t, dec, false)
	return end
}

// numberChecks checks a number against the enum and the bounds, exactly.
// With onlyDecimal, only what the fast path leaves: the bounds that are not
// integers, and an enum with a non-integer.
func (c *argsCheck) numberChecks(fs *fieldSpec, t []byte, dec jsonDecimal, onlyDecimal bool) {
	if fs.hasEnum && (!onlyDecimal || fs.intEnum == nil) && !inNumEnum(fs.numEnum, &dec) {
		c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be one of "+fs.enumText+", not "+shortText(t))
	}
	for k := range fs.bounds {
		b := &fs.bounds[k]
		if onlyDecimal && b.isInt {
			continue
		}
		if !b.holds(dec.cmp(&b.d)) {
			c.add(fs.name, "field "+strconv.Quote(fs.name)+" must be "+b.words()+" "+b.text+", not "+shortText(t))
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
func (c *argsCheck) appendNumber(typ catalog.Type, t []byte, dec *jsonDecimal) {
	if typ == catalog.Integer && !plainInteger(t) {
		if n, ok := dec.int64(); ok {
			c.out = strconv.AppendInt(c.out, n, 10)
			return
		}
	}
	c.out = append(c.out, t...)
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
	c.out = append(c.out, '[')
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
				c.out = append(c.out, ',')
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
	c.out = append(c.out, ']')
	if bad == 0 && (fs.minItems < 0 || int64(count) >= fs.minItems) && (fs.maxItems < 0 || int64(count) <= fs.maxItems) && (!fs.unique || count < 2) {
		return i
	}
	q := strconv.Quote(fs.name)
	if bad > maxItemProblems {
		c.add(fs.name, "field "+q+" has "+strconv.Itoa(bad-maxItemProblems)+" more items that are not "+string(fs.items)+"s")
	}
	if fs.minItems >= 0 && int64(count) < fs.minItems {
		c.add(fs.name, "field "+q+" must have at least "+itemCount(fs.minItems)+", not "+strconv.Itoa(count))
	}
	if fs.maxItems >= 0 && int64(count) > fs.maxItems {
		c.add(fs.name, "field "+q+" must have at most "+itemCount(fs.maxItems)+", not "+strconv.Itoa(count))
	}
	if fs.unique && bad == 0 && count > 1 {
		if a, b := c.duplicate(); a >= 0 {
			c.add(fs.name, "field "+q+" must have unique items, but the items at indexes "+strconv.Itoa(a)+" and "+strconv.Itoa(b)+" are equal")
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
	switch fs.items {
	case catalog.String:
		if ch == '"' {
			end, flags := c.scanString(i)
			if end < 0 {
				return -1, false
			}
			raw := d[i+1 : end-1]
			s, repaired := raw, false
			if flags != 0 {
				s, repaired = c.decode(raw, flags)
			}
			if repaired {
				c.out = appendQuoted(c.out, s)
			} else {
				c.out = append(c.out, d[i:end]...)
			}
			if fs.unique {
				c.keys = append(c.keys, s...)
				c.ends = append(c.ends, len(c.keys))
			}
			return end, true
		}
	case catalog.Integer, catalog.Number:
		if ch == '-' || ch >= '0' && ch <= '9' {
			end, ok := scanNumberAt(d, i)
			if !ok {
				c.syntax(end, "invalid number")
				return -1, false
			}
			t := d[i:end]
			if _, ok := smallInt(t); ok && !fs.unique {
				c.out = append(c.out, t...)
				return end, true
			}
			dec := parseDecimal(t)
			if fs.items == catalog.Integer && !dec.isInteger() {
				c.itemProblem(fs, index, bad, i, end)
				return end, false
			}
			c.appendNumber(fs.items, t, &dec)
			if fs.unique {
				c.keys = dec.appendKey(c.keys)
				c.ends = append(c.ends, len(c.keys))
			}
			return end, true
		}
	case catalog.Boolean:
		if ch == 't' || ch == 'f' {
			end, ok := scanLiteral(d, i)
			if !ok {
				c.syntax(i, "expected a value")
				return -1, false
			}
			c.out = append(c.out, d[i:end]...)
			if fs.unique {
				c.keys = append(c.keys, ch)
				c.ends = append(c.ends, len(c.keys))
			}
			return end, true
		}
	}
	end = c.skip(i, 2)
	if end < 0 {
		return -1, false
	}
	c.itemProblem(fs, index, bad, i, end)
	return end, false
}

func (c *argsCheck) itemProblem(fs *fieldSpec, index, bad, start, end int) {
	if bad >= maxItemProblems {
		return
	}
	c.add(fs.name, "item at index "+strconv.Itoa(index)+" of field "+strconv.Quote(fs.name)+" must be "+typeWords(fs.items)+", not "+c.describe(start, end))
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
	if d.huge {
		return d.bigExp().Append(b, 10)
	}
	return strconv.AppendInt(b, d.exp, 10)
}

// unknown reports a field that the request does not have, with the field
// it was most likely meant to be.
func (c *argsCheck) unknown(name string) {
	for _, p := range c.problems {
		if p.Field == name && strings.HasPrefix(p.Message, "unknown") {
			return // once is enough
		}
	}
	msg := "unknown field " + strconv.Quote(name)
	switch {
	case len(c.v.fields) == 0:
		msg += "; this tool takes no arguments"
	default:
		if s := c.suggest(name); s != "" {
			msg += "; did you mean " + strconv.Quote(s) + "?"
		} else if !c.listed {
			// The list of fields once is enough.
			c.listed = true
			msg += "; the fields are " + c.v.fieldList()
		}
	}
	c.add(name, msg)
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

// describe says what the value at data[start:end] is, for messages: "the
// string \"x\"", "the number 2.5", "an array".
func (c *argsCheck) describe(start, end int) string {
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
			s, _ = c.decode(raw, flags)
		}
		return "the string " + quoteShort(s)
	case 't', 'f':
		return "the boolean " + string(t)
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "the number " + shortText(t)
}

// quoteShort quotes a string for a message, cut to 64 characters.
func quoteShort(s []byte) string {
	const limit = 64
	if utf8.RuneCount(s) <= limit {
		return strconv.Quote(string(s))
	}
	n := 0
	for k := range string(s) {
		if n == limit {
			return strconv.Quote(string(s[:k])) + "…"
		}
		n++
	}
	return strconv.Quote(string(s))
}

// shortText is a number's text, cut to 64 bytes.
func shortText(t []byte) string {
	if len(t) > 64 {
		return string(t[:64]) + "…"
	}
	return string(t)
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

// decode returns a string's contents with escapes resolved and invalid
// UTF-8 replaced by U+FFFD, as encoding/json reads it. repaired says that
// something was replaced, so that the output must be encoded anew.
func (c *argsCheck) decode(raw []byte, flags strFlags) (s []byte, repaired bool) {
	if flags&hasEscape == 0 && utf8.Valid(raw) {
		return raw, false
	}
	b := c.str[:0]
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
	c.str = b
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
				c.problems = append(c.problems[:0], Problem{Message: "the arguments are nested too deeply: more than " + strconv.Itoa(maxArgsDepth) + " levels of arrays and objects"})
				c.broken = true
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
