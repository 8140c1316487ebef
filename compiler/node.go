package compiler

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
)

// kind is the shape of an evaluated contract value.
type kind int

const (
	kStruct kind = iota
	kList
	kString
	kInt
	kFloat
	kBool
	kNull
	kBytes
	// kHuge is a number that no 64-bit type holds: beyond float64's
	// range, or so close to zero that a float64 reads it as 0. CUE's
	// numbers are arbitrary-precision; every JSON decoder a call meets is
	// not. Such a node has no value(), so it never reaches a catalog, and
	// the rule that owns its key reports it.
	kHuge
	kIncomplete // not concrete, such as `string` or `>=1`
	kError      // an evaluation error, such as conflicting values
)

var kindNames = [...]string{
	kStruct: "struct", kList: "list", kString: "string", kInt: "integer", kFloat: "number",
	kBool: "bool", kNull: "null", kBytes: "bytes", kHuge: "number", kIncomplete: "incomplete value", kError: "error",
}

func (k kind) String() string { return kindNames[k] }

// node is an evaluated contract value as plain data: the rules walk nodes,
// not cue.Values, so that a check never triggers evaluation and each
// package is evaluated exactly once.
type node struct {
	label  string
	path   string // dotted path from the package root, for messages
	pos    token.Pos
	kind   kind
	fields []*node // kStruct, in CUE's order
	elems  []*node // kList
	str    string  // kString; the CUE expression for kIncomplete; the number for kHuge and wide
	i      int64
	f      float64 // kFloat; for kHuge, ±Inf above float64's range and ±0 below it
	// wide marks a kFloat that CUE holds as an integer outside int64: a
	// fine number, but no integer field's value or length bound.
	wide bool
	b    bool
	err  cueerrors.Error // kError
}

// get returns the field with the given label, or nil.
func (n *node) get(label string) *node {
	if n == nil || n.kind != kStruct {
		return nil
	}
	for _, f := range n.fields {
		if f.label == label {
			return f
		}
	}
	return nil
}

// value returns the node as a JSON-shaped Go value, or nil and false if it
// holds anything but data.
func (n *node) value() (any, bool) {
	switch n.kind {
	case kString:
		return n.str, true
	case kInt:
		return n.i, true
	case kFloat:
		return n.f, true
	case kBool:
		return n.b, true
	case kList:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			v, ok := e.value()
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	case kStruct:
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			v, ok := f.value()
			if !ok {
				return nil, false
			}
			out[f.label] = v
		}
		return out, true
	}
	return nil, false
}

// decode converts an evaluated value into nodes, collecting evaluation
// errors at the leaves where they arise.
func decode(v cue.Value) (*node, []cueerrors.Error) {
	d := &decoder{}
	root := d.decode(v, "", "")
	if len(d.errs) == 0 {
		// An error that no leaf carries, such as a failed comprehension at
		// the root: report it rather than lose it.
		if err := v.Err(); err != nil {
			d.errs = append(d.errs, cueerrors.Errors(err)...)
		}
	}
	return root, d.errs
}

type decoder struct {
	errs []cueerrors.Error
}

func (d *decoder) decode(v cue.Value, label, path string) *node {
	if dv, ok := v.Default(); ok {
		v = dv
	}
	n := &node{label: label, path: path}
	if path == "" || path == "tools" || label == "fields" {
		// The root and these maps gather a conjunct per entry, which
		// declPos would walk at a cost that shows in `toolc check` on large
		// catalogs, and their own position is not reported (the root's is
		// servicePos).
		n.pos = v.Pos()
	} else {
		n.pos = declPos(v)
	}
	if err := v.Err(); err != nil {
		// A struct whose child failed is itself an error in CUE; descend, so
		// that the error is reported once, where it arose, and the
		// struct's other fields are still checked. Such a struct's kind
		// may be bottom, which is 0: a mask would not find it.
		ik := v.IncompleteKind()
		if (ik&cue.StructKind != 0 || ik == cue.BottomKind) && d.decodeFields(v, n) {
			return n
		}
		if (ik&cue.ListKind != 0 || ik == cue.BottomKind) && d.decodeList(v, n) {
			return n
		}
		n.kind = kError
		errs := cueerrors.Errors(err)
		if len(errs) > 0 {
			n.err = errs[0]
		}
		d.errs = append(d.errs, errs...)
		return n
	}
	switch v.Kind() {
	case cue.StructKind:
		d.decodeFields(v, n)
	case cue.ListKind:
		d.decodeList(v, n)
	case cue.StringKind:
		n.kind = kString
		n.str, _ = v.String()
	case cue.IntKind:
		n.kind = kInt
		if i, err := v.Int64(); err == nil {
			n.i = i
			break
		}
		if b, err := v.Int(nil); err == nil && b.IsInt64() {
			n.i = b.Int64() // CUE's Int64 refuses math.MinInt64 itself
			break
		}
		decodeNumber(v, n)
		if n.kind == kFloat {
			n.wide, n.str = true, numberText(v)
		}
	case cue.FloatKind:
		decodeNumber(v, n)
	case cue.BoolKind:
		n.kind = kBool
		n.b, _ = v.Bool()
	case cue.NullKind:
		n.kind = kNull
	case cue.BytesKind:
		n.kind = kBytes
	default:
		n.kind = kIncomplete
		n.str = strings.TrimSpace(fmt.Sprint(v))
		if n.str == "" || strings.Contains(n.str, "\n") {
			n.str = v.IncompleteKind().String()
		}
	}
	return n
}

// decodeNumber decodes a number that may lie outside float64: the rules, not
// the decoder, report it, each under the rule that owns the key.
func decodeNumber(v cue.Value, n *node) {
	f, err := v.Float64()
	if math.IsNaN(f) {
		// CUE makes NaN of a literal whose exponent it cannot hold, such
		// as 0e99999999999999999999, which is 0. strconv reads the
		// literal's mathematical value, as JSON Schema means it.
		f, err = math.NaN(), nil
		if lit, ok := literal(v); ok {
			f, err = strconv.ParseFloat(lit, 64)
		}
	}
	if err == nil && !math.IsNaN(f) {
		n.kind, n.f = kFloat, f
		return
	}
	n.kind, n.f, n.str = kHuge, f, numberText(v)
}

// literal returns the text of a number written as a literal, with its
// sign and without CUE's digit separators.
func literal(v cue.Value) (string, bool) {
	sign := ""
	expr := v.Source()
	if u, ok := expr.(*ast.UnaryExpr); ok && (u.Op == token.SUB || u.Op == token.ADD) {
		sign, expr = u.Op.String(), u.X
	}
	lit, ok := expr.(*ast.BasicLit)
	if !ok || lit.Kind != token.FLOAT && lit.Kind != token.INT {
		return "", false
	}
	return sign + strings.ReplaceAll(lit.Value, "_", ""), true
}

// numberText is a number as CUE writes it, cut short: a number of a
// million digits would make a message of as many.
func numberText(v cue.Value) string {
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = fmt.Sprintf("%s… (%d characters)", s[:20], len(s))
	}
	return s
}

// declPos returns where a value is declared. For a field declared in
// several places, as a tool that a second file extends, CUE's Pos is
// inside the last declaration's value; the first declaration's label is
// where a diagnostic about the whole field belongs.
func declPos(v cue.Value) token.Pos {
	if src := v.Source(); src != nil {
		if pos := src.Pos(); pos.IsValid() {
			return pos // as v.Pos() would, without a second Source
		}
	} else if op, args := v.Expr(); op == cue.AndOp {
		for _, a := range args {
			if pos := a.Pos(); pos.IsValid() {
				return pos
			}
		}
	}
	return v.Pos()
}

func (d *decoder) decodeFields(v cue.Value, n *node) bool {
	it, err := v.Fields()
	if err != nil {
		return false
	}
	n.kind = kStruct
	for it.Next() {
		sel := it.Selector()
		label := sel.String()
		if sel.IsString() {
			label = sel.Unquoted()
		}
		n.fields = append(n.fields, d.decode(it.Value(), label, join(n.path, label)))
	}
	return len(n.fields) > 0 || v.Err() == nil
}

func (d *decoder) decodeList(v cue.Value, n *node) bool {
	it, err := v.List()
	if err != nil {
		return false
	}
	n.kind = kList
	for i := 0; it.Next(); i++ {
		n.elems = append(n.elems, d.decode(it.Value(), fmt.Sprint(i), fmt.Sprintf("%s[%d]", n.path, i)))
	}
	return len(n.elems) > 0 || v.Err() == nil
}

func join(path, label string) string {
	if path == "" {
		return label
	}
	return path + "." + label
}
