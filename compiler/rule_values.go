package compiler

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/validate"
)

// enumRule checks enums: providers reject empty or mixed enums, and Gemini
// takes them only on strings.
var enumRule = &Rule{
	ID:       "enum",
	Doc:      "enums are non-empty, unique, of the field's type, and only on string and integer fields and arrays of them (the items' values)",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for f := range p.fields() {
			e := f.node.get("enum")
			if e == nil || e.kind == kError || e.kind == kIncomplete {
				continue
			}
			if e.kind != kList {
				p.reportf(e.pos, "enum of %s must be a list of values, not %s", f.describe(), e.kind)
				continue
			}
			typ := stringAt(f.node, "type")
			if isRecord(f.node) {
				p.reportf(e.pos, "enum does not apply to %s, an array of records; put an enum on a field of the record", f.describe())
				continue
			}
			if typ == "array" {
				// A multi-select: the enum lists the values of the items.
				switch items := stringAt(f.node, "items"); items {
				case "string", "integer":
					typ = items
				case "":
					continue // flat-fields reports the missing items
				default:
					p.reportf(e.pos, "enum is only allowed on string and integer fields and on arrays of strings or integers, and %s is an array of %ss", f.describe(), items)
					continue
				}
			}
			if typ != "string" && typ != "integer" {
				if typ != "" {
					p.reportf(e.pos, "enum is only allowed on string and integer fields and on arrays of strings or integers, and %s is of type %q", f.describe(), typ)
				}
				continue
			}
			if len(e.elems) == 0 {
				p.reportf(e.pos, "enum of %s is empty; list the allowed values, or drop the enum", f.describe())
				continue
			}
			want := kString
			if typ == "integer" {
				want = kInt
			}
			seen := map[any]bool{}
			for _, x := range e.elems {
				v, ok := x.value()
				switch {
				case x.kind == kError || x.kind == kIncomplete:
				case want == kInt && outOfRange(x, catalog.Integer) != "":
					p.reportf(x.pos, "enum of %s has %s, %s", f.describe(), describeNode(x), outOfRange(x, catalog.Integer))
				case x.kind != want || !ok:
					p.reportf(x.pos, "enum value %s of %s is not %s", describeNode(x), f.describe(), article(typ))
				case seen[v]:
					p.reportf(x.pos, "enum value %s of %s is listed twice", catalog.FormatValue(v), f.describe())
				default:
					seen[v] = true
				}
			}
		}
	},
}

// defaultRule checks defaults: the runtime fills them in before a handler
// runs, so a default that the field itself would reject is a latent bug.
var defaultRule = &Rule{
	ID:       "default",
	Doc:      "defaults only on optional fields, of the field's type, inside the enum, the bounds and the format",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for f := range p.fields() {
			d := f.node.get("default")
			if d == nil || d.kind == kError || d.kind == kIncomplete {
				continue
			}
			if f.message == "response" {
				p.reportf(d.pos, "%s has a default, which means nothing in a response: the handler's result supplies every response value; drop it", f.describe())
				continue
			}
			if isRecord(f.node) {
				p.reportf(d.pos, "%s is an array of records, which has no default: an optional one that a call leaves out is absent; drop the default, and give defaults to the record's fields instead", f.describe())
				continue
			}
			if stringAt(f.node, "type") == "json" {
				p.reportf(d.pos, "%s is a free-form (json) field, which has no default: an optional one that a call leaves out is absent; drop the default", f.describe())
				continue
			}
			if r := f.node.get("required"); r == nil || r.kind == kBool && r.b {
				p.reportf(d.pos, "%s is required, so its default would never apply; add required: false, or drop the default", f.describe())
				continue
			}
			fld := lowerer{}.field(f.node)
			if !knownType(fld) {
				continue
			}
			for _, msg := range checkNodeValue(fld, "default of "+f.describe(), d) {
				p.reportf(d.pos, "%s", msg)
			}
		}
	},
}

// knownType reports whether a field's type is one the value checks apply to.
func knownType(f *catalog.Field) bool {
	switch f.Type {
	case catalog.String, catalog.Integer, catalog.Number, catalog.Boolean, catalog.JSON:
		return true
	case catalog.Array:
		if f.IsRecord() {
			return len(f.Fields) > 0 && !slices.ContainsFunc(f.Fields, func(sub *catalog.Field) bool { return !knownType(sub) })
		}
		return contains(scalarTypes, string(f.Items))
	}
	return false
}

// checkNodeValue checks a contract value against a field with the code
// that checks the field's value in every call (validate.CheckValue), and
// returns a message for each problem, each starting with subject, which
// names the value. Before that, the value must be one that JSON carries as
// it is: CUE is stricter than JSON in one way, 3.0 is a float and not an
// integer, and CUE's numbers have no 64-bit limits.
func checkNodeValue(f *catalog.Field, subject string, n *node) []string {
	if msgs := checkNodeNumbers(f, subject, n); msgs != nil {
		return msgs
	}
	v, ok := n.value()
	if f.IsRecord() || f.Type == catalog.JSON {
		v, ok = anyValue(n)
	}
	if !ok {
		return []string{fmt.Sprintf("%s must be a plain value, not %s", subject, n.kind)}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return []string{fmt.Sprintf("%s must be a plain value: %v", subject, err)}
	}
	err = validate.CheckValue(f, subject, data)
	var problems *validate.ValidationError
	if err != nil && !errors.As(err, &problems) {
		// The field does not compile: bounds reports why. Hold the value
		// to the rest of it.
		err = validate.CheckValue(checkable(f), subject, data)
	}
	if !errors.As(err, &problems) {
		return nil
	}
	msgs := make([]string, len(problems.Problems))
	for i, pr := range problems.Problems {
		msgs[i] = pr.Message
	}
	return msgs
}

// checkNodeNumbers holds the numbers of a contract value to what JSON
// carries as it is, which the validator cannot see in the JSON it is
// given: CUE's 3.0 is a float and not an integer, and CUE's numbers have
// no 64-bit limits. It returns a message for the first number that does
// not fit, or nil.
func checkNodeNumbers(f *catalog.Field, subject string, n *node) []string {
	switch {
	case f.Type == catalog.JSON:
		return nil // any number that JSON holds; anyValue refuses one beyond float64
	case f.IsRecord() && n.kind == kList:
		for i, e := range n.elems {
			for _, m := range e.structFields() {
				if sub := f.Field(m.label); sub != nil {
					if msgs := checkNodeNumbers(sub, fmt.Sprintf("item at index %d of %s: field %q", i, subject, m.label), m); msgs != nil {
						return msgs
					}
				}
			}
		}
		return nil
	case f.Type == catalog.Array && n.kind == kList:
		for i, e := range n.elems {
			if why := outOfRange(e, f.Items); why != "" {
				return []string{fmt.Sprintf("%s has %s at index %d, %s", subject, describeNode(e), i, why)}
			}
		}
		return nil
	}
	if why := outOfRange(n, f.Type); why != "" {
		return []string{fmt.Sprintf("%s is %s, %s", subject, describeNode(n), why)}
	}
	if f.Type == catalog.Integer && n.kind == kFloat {
		// FormatNumber renders 3.0 as 3, which would read as no problem at all.
		if s := catalog.FormatNumber(n.f); !strings.ContainsAny(s, ".eN") {
			return []string{fmt.Sprintf("%s must be an integer, not the number %s.0; write %s", subject, s, s)}
		}
		return []string{fmt.Sprintf("%s must be an integer, not the number %s", subject, catalog.FormatNumber(n.f))}
	}
	return nil
}

// anyValue is the value of a node as JSON carries it, null included: the
// value of a record field, whose items' members may be null (absent, for
// an optional field, as in a call), or of a free-form (json) field.
func anyValue(n *node) (any, bool) {
	switch n.kind {
	case kNull:
		return nil, true
	case kList:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			v, ok := anyValue(e)
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	case kStruct:
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			v, ok := anyValue(f)
			if !ok {
				return nil, false
			}
			out[f.label] = v
		}
		return out, true
	}
	return n.value()
}

// checkable is f without the constraints that the validator refuses to
// compile: a pattern that is not RE2, a format it does not know, and on
// an array of records an enum, a default or uniqueItems.
func checkable(f *catalog.Field) *catalog.Field {
	cp := *f
	if _, err := regexp.Compile(f.Pattern); err != nil {
		cp.Pattern = ""
	}
	if !contains(validate.Formats(), f.Format) {
		cp.Format = ""
	}
	if f.IsRecord() {
		cp.Enum, cp.Default, cp.UniqueItems = nil, nil, false
		cp.Fields = make([]*catalog.Field, len(f.Fields))
		for i, sub := range f.Fields {
			cp.Fields[i] = checkable(sub)
		}
	}
	return &cp
}

// outOfRange says why a contract number is no value of a field of type
// typ, or "" when it may be one. An integer field holds int64, the type of
// its generated Go field, and a number field float64, what JSON decoders
// read numbers into; CUE's numbers have no such limits.
func outOfRange(n *node, typ catalog.Type) string {
	switch {
	case n.kind == kHuge && typ == catalog.Integer && n.f == 0:
		return "which is not an integer"
	case typ == catalog.Integer && (n.kind == kHuge || n.kind == kFloat && n.f == math.Trunc(n.f) && !fitsInt64(n.f)):
		return "which is outside the range of an integer, " + catalog.IntegerRange
	case n.kind == kHuge && n.f == 0:
		return "which is so close to zero that a number, a 64-bit float, would read it as 0"
	case n.kind == kHuge:
		return fmt.Sprintf("which is beyond the range of a number, a 64-bit float: at most %s either side of 0", catalog.FormatNumber(math.MaxFloat64))
	}
	return ""
}

// fitsInt64 reports whether an integral float64 is an int64. 2^63 is a
// float64, and the first integer above int64.
func fitsInt64(f float64) bool { return f >= -(1<<63) && f < 1<<63 }

// countRange says why a length or count bound is none, or "".
func countRange(n *node) string {
	if n.kind == kHuge || n.wide {
		return "which is beyond the range of a length or count, a 64-bit integer: at most 9223372036854775807"
	}
	return ""
}

// constraintTypes says which field types each constraint applies to.
var constraintTypes = map[string][]string{
	"minLength": {"string"}, "maxLength": {"string"}, "pattern": {"string"}, "format": {"string"},
	"minimum": {"integer", "number"}, "maximum": {"integer", "number"},
	"exclusiveMinimum": {"integer", "number"}, "exclusiveMaximum": {"integer", "number"},
	"minItems": {"array"}, "maxItems": {"array"}, "uniqueItems": {"array"},
	"object": {"json"},
}

// boundsRule checks constraints: that each fits its field's type, that the
// range they leave is not empty, and that patterns and formats mean the
// same thing to every validator.
var boundsRule = &Rule{
	ID:       "bounds",
	Doc:      "min ≤ max; the pattern compiles as RE2 and ECMA-262; the format is known; each constraint fits the field's type",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for f := range p.fields() {
			n := f.node
			typ := stringAt(n, "type")
			if n.kind != kStruct || !contains(fieldTypes, typ) {
				continue
			}
			for _, k := range n.fields {
				types, ok := constraintTypes[k.label]
				if !ok || contains(types, typ) {
					continue
				}
				p.reportf(k.pos, "%s does not apply to %s, which is of type %q; it applies to %s fields%s",
					k.label, f.describe(), typ, strings.Join(types, " and "), alternative(k.label, typ))
			}
			if u := n.get("uniqueItems"); u != nil && isRecord(n) {
				p.reportf(u.pos, "uniqueItems does not apply to %s, an array of records", f.describe())
			}
			checkRange(p, f, "minLength", "maxLength")
			checkRange(p, f, "minItems", "maxItems")
			empty := checkRange(p, f, "minimum", "maximum")
			empty = checkRange(p, f, "exclusiveMinimum", "exclusiveMaximum") || empty
			empty = checkRange(p, f, "minimum", "exclusiveMaximum") || empty
			empty = checkRange(p, f, "exclusiveMinimum", "maximum") || empty
			if typ == "integer" && !empty {
				checkIntegerRange(p, f)
			}
			for _, key := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
				k := n.get(key)
				switch {
				case k == nil || !contains(constraintTypes[key], typ):
				case countRange(k) != "":
					p.reportf(k.pos, "%s of %s is %s, %s", key, f.describe(), describeNode(k), countRange(k))
				case k.kind == kInt && k.i < 0:
					p.reportf(k.pos, "%s of %s is negative", key, f.describe())
				}
			}
			for _, key := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
				k := n.get(key)
				if k == nil || !contains(constraintTypes[key], typ) {
					continue
				}
				if why := outOfRange(k, catalog.Type(typ)); why != "" {
					p.reportf(k.pos, "%s of %s is %s, %s", key, f.describe(), describeNode(k), why)
					continue
				}
				if typ == "integer" {
					switch {
					case k.kind != kFloat:
					case k.f != math.Trunc(k.f):
						p.reportf(k.pos, "%s of integer %s must be an integer, not %s", key, f.describe(), catalog.FormatNumber(k.f))
					default:
						// CUE, and so cue vet, keeps 1.0 a float.
						p.reportf(k.pos, "%s of integer %s must be written as an integer: %s, not %s.0", key, f.describe(), catalog.FormatNumber(k.f), catalog.FormatNumber(k.f))
					}
				}
			}
			if pat := n.get("pattern"); pat != nil && pat.kind == kString {
				if msg := checkPattern(pat.str); msg != "" {
					p.reportf(pat.pos, "pattern of %s %s", f.describe(), msg)
				}
			}
			if fm := n.get("format"); fm != nil && fm.kind == kString && !contains(validate.Formats(), fm.str) {
				formats := validate.Formats()
				p.reportf(fm.pos, "format %q of %s is unknown%s; want one of %s", fm.str, f.describe(), suggest(fm.str, formats), strings.Join(formats, ", "))
			}
		}
	},
}

func alternative(key, typ string) string {
	switch {
	case typ == "string" && (key == "minimum" || key == "maximum"):
		return "; for a length use minLength and maxLength"
	case typ == "array" && (key == "minLength" || key == "maxLength"):
		return "; for a count use minItems and maxItems"
	case (typ == "integer" || typ == "number") && (key == "minLength" || key == "maxLength"):
		return "; for a range use minimum and maximum"
	}
	return ""
}

// checkRange reports a lower bound above an upper one, at the upper one,
// and says whether it did.
func checkRange(p *Pass, f field, lo, hi string) bool {
	l, h := f.node.get(lo), f.node.get(hi)
	lv, lok := number(l)
	hv, hok := number(h)
	if !lok || !hok {
		return false
	}
	exclusive := strings.HasPrefix(lo, "exclusive") || strings.HasPrefix(hi, "exclusive")
	switch {
	case lv > hv:
		p.reportf(h.pos, "%s %s of %s is below its %s %s, so no value fits", hi, catalog.FormatNumber(hv), f.describe(), lo, catalog.FormatNumber(lv))
	case exclusive && lv == hv:
		p.reportf(h.pos, "%s %s of %s equals its %s, so no value fits", hi, catalog.FormatNumber(hv), f.describe(), lo)
	default:
		return false
	}
	return true
}

// checkIntegerRange reports bounds that leave room for numbers but not for
// integers, such as exclusiveMinimum 1 and exclusiveMaximum 2.
func checkIntegerRange(p *Pass, f field) {
	lo, hi := math.Inf(-1), math.Inf(1)
	var loKey, hiKey string
	if v, ok := number(f.node.get("minimum")); ok && math.Ceil(v) > lo {
		lo, loKey = math.Ceil(v), "minimum"
	}
	if v, ok := number(f.node.get("exclusiveMinimum")); ok && math.Floor(v)+1 > lo {
		lo, loKey = math.Floor(v)+1, "exclusiveMinimum"
	}
	if v, ok := number(f.node.get("maximum")); ok && math.Floor(v) < hi {
		hi, hiKey = math.Floor(v), "maximum"
	}
	if v, ok := number(f.node.get("exclusiveMaximum")); ok && math.Ceil(v)-1 < hi {
		hi, hiKey = math.Ceil(v)-1, "exclusiveMaximum"
	}
	if loKey != "" && hiKey != "" && lo > hi {
		p.reportf(f.node.get(hiKey).pos, "no integer fits between the %s and the %s of integer %s", loKey, hiKey, f.describe())
	}
}

func number(n *node) (float64, bool) {
	switch {
	case n == nil:
		return 0, false
	case n.kind == kInt:
		return float64(n.i), true
	case n.kind == kFloat:
		return n.f, true
	}
	return 0, false
}

// checkPattern requires a pattern to compile both as RE2, which Go
// validators use, and as ECMA-262, which JSON Schema specifies and which
// JavaScript clients use.
func checkPattern(pat string) string {
	re2Only, ecmaOnly := dialectOnly(pat)
	if _, err := regexp.Compile(pat); err != nil {
		if ecmaOnly != "" {
			// Go's own message for (?<=a) is "invalid named capture".
			return fmt.Sprintf("uses %s, which RE2 (Go's regexp, which the runtime validates with) does not support", ecmaOnly)
		}
		return fmt.Sprintf("does not compile as RE2: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if re2Only != "" {
		return fmt.Sprintf("uses %s, which ECMA-262 (JSON Schema and JavaScript clients) does not support", re2Only)
	}
	if _, err := regexp2.Compile(pat, regexp2.ECMAScript); err != nil {
		return fmt.Sprintf("does not compile as an ECMA-262 regular expression: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return ""
}

// dialectOnly returns the first construct in a pattern that only RE2 has
// and the first that only ECMA-262 has. regexp2's ECMAScript mode accepts
// most RE2 extensions, such as (?i) and \z, which a JavaScript RegExp
// rejects or reads as something else, so compiling with it is not enough.
func dialectOnly(pat string) (re2Only, ecmaOnly string) {
	note := func(dst *string, what string) {
		if *dst == "" {
			*dst = what
		}
	}
	inClass := false
	for i := 0; i < len(pat); i++ {
		c, rest := pat[i], pat[i+1:]
		switch {
		case c == '\\' && rest != "":
			switch e := rest[0]; {
			case strings.IndexByte("AzQE", e) >= 0 && !inClass:
				note(&re2Only, `the escape \`+string(e))
			case (e == 'p' || e == 'P') && !strings.HasPrefix(rest[1:], "{"):
				note(&re2Only, `a one-letter Unicode class such as \pL (write \p{L})`)
			case e == 'x' && strings.HasPrefix(rest[1:], "{"):
				note(&re2Only, `a braced hex escape such as \x{41}`)
			case e >= '1' && e <= '9' || e == 'k':
				note(&ecmaOnly, "a backreference")
			}
			i++
		case inClass:
			if strings.HasPrefix(pat[i:], "[:") {
				note(&re2Only, "a POSIX class such as [:alpha:]")
			}
			inClass = c != ']'
		case c == '[':
			inClass = true
			if strings.HasPrefix(rest, "^]") || strings.HasPrefix(rest, "]") {
				i += strings.IndexByte(rest, ']') + 1 // a leading ] is literal
			}
		case c == '(' && (strings.HasPrefix(rest, "?=") || strings.HasPrefix(rest, "?!") ||
			strings.HasPrefix(rest, "?<=") || strings.HasPrefix(rest, "?<!")):
			note(&ecmaOnly, "a lookahead or lookbehind")
		case c == '(' && strings.HasPrefix(rest, "?P<"):
			note(&re2Only, "a Go-style named group (?P<name>...) (write (?<name>...), which both accept)")
		case c == '(' && len(rest) > 1 && rest[0] == '?' && strings.IndexByte("imsU-", rest[1]) >= 0:
			note(&re2Only, "inline flags such as (?i)")
		}
	}
	return re2Only, ecmaOnly
}

// exampleRule checks examples against the request at compile time, so that
// the examples a model is shown are calls that would succeed.
var exampleRule = &Rule{
	ID:       "example",
	Doc:      "every example validates against the request",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for t := range p.tools() {
			ex := t.node.get("examples")
			if ex == nil || ex.kind != kList {
				continue
			}
			req := t.node.get("request").get("fields")
			if req == nil || req.kind != kStruct {
				continue
			}
			for i, e := range ex.elems {
				switch e.kind {
				case kStruct:
					checkExample(p, t, i, e, req)
				case kError, kIncomplete:
				default:
					p.reportf(e.pos, "example %d of tool %q must be an object of arguments, such as %s; it is %s", i+1, t.node.label, exampleHint(req), e.kind)
				}
			}
		}
		for f := range p.fields() {
			ex := f.node.get("examples")
			if ex == nil || ex.kind != kList {
				continue
			}
			fld := lowerer{}.field(f.node)
			if !knownType(fld) {
				continue
			}
			for _, e := range ex.elems {
				if e.kind == kError || e.kind == kIncomplete {
					continue
				}
				for _, msg := range checkNodeValue(fld, fmt.Sprintf("example %s of %s", describeNode(e), f.describe()), e) {
					p.reportf(e.pos, "%s", msg)
				}
			}
		}
	},
}

func checkExample(p *Pass, t tool, i int, e, req *node) {
	where := fmt.Sprintf("example %d of tool %q", i+1, t.node.label)
	for _, arg := range e.fields {
		fn := req.get(arg.label)
		if fn == nil {
			p.reportf(arg.pos, "%s has argument %q, which is not a request field%s", where, arg.label, suggest(arg.label, labels(req)))
			continue
		}
		fld := lowerer{}.field(fn)
		if fn.kind != kStruct || !knownType(fld) || arg.kind == kError || arg.kind == kIncomplete || arg.kind == kNull && !nullIsValue(fld) {
			continue // null means absent, as in a call: see below
		}
		for _, msg := range checkNodeValue(fld, fmt.Sprintf("argument %q of %s", arg.label, where), arg) {
			p.reportf(arg.pos, "%s", msg)
		}
	}
	var missing []string
	for _, fn := range req.fields {
		// A call that gives null for a field leaves it out (validate.Validator).
		if arg := e.get(fn.label); fn.kind == kStruct && (lowerer{}).field(fn).Required && (arg == nil || arg.kind == kNull && !nullIsValue(lowerer{}.field(fn))) {
			missing = append(missing, strconv.Quote(fn.label))
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		p.reportf(e.pos, "%s lacks the required argument %s", where, missing[0])
	default:
		p.reportf(e.pos, "%s lacks the required arguments %s", where, strings.Join(missing, ", "))
	}
}

// nullIsValue reports whether null is a value of a field, rather than its
// absence: for a required free-form (json) field, whose value may be any
// JSON value, as the runtime reads it.
func nullIsValue(f *catalog.Field) bool {
	return f.Required && f.Type == catalog.JSON
}

func exampleHint(req *node) string {
	if len(req.fields) == 0 {
		return "{}"
	}
	return "{" + req.fields[0].label + ": ...}"
}

func labels(n *node) []string {
	out := make([]string, 0, len(n.fields))
	for _, f := range n.fields {
		out = append(out, f.label)
	}
	return out
}

func article(typ string) string {
	if typ == "integer" || typ == "array" {
		return "an " + typ
	}
	return "a " + typ
}

func describeNode(n *node) string {
	if n.kind == kHuge || n.wide {
		return n.str
	}
	if v, ok := n.value(); ok {
		return catalog.FormatValue(v)
	}
	return n.kind.String()
}
