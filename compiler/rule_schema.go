package compiler

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/editdist"
	"github.com/toolc/toolc/internal/inputfile"
)

// syntaxRule reports CUE syntax and load errors: files that do not parse,
// imports that do not resolve, references to nothing.
var syntaxRule = &Rule{
	ID:       "syntax",
	Doc:      "CUE syntax and load errors",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for _, pkg := range p.packages {
			for _, err := range pkg.loadErrs {
				if pos, name, ok := unquotedHyphenKey(err); ok {
					p.reportf(pos, "%s: the name %s needs quotes, %q, because a hyphen is not part of a CUE identifier (CUE reads %s as a subtraction)", cueMessage(err), name, name, strings.Replace(name, "-", " - ", 1))
					continue
				}
				p.reportCUE(pkg, err)
			}
		}
	},
}

// hyphenKeyEnd matches a key with a hyphen, such as get-sum, at the end of
// the text before a colon: the parser stops at the colon with "missing ','
// in struct literal", which says nothing of the name.
var hyphenKeyEnd = regexp.MustCompile(`(?:^|[\s{,])([A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)+)\s*$`)

// unquotedHyphenKey recognizes the parse error of an unquoted key with a
// hyphen (tools: get-sum: {...}), and returns where the key starts and
// the key.
func unquotedHyphenKey(err cueerrors.Error) (token.Pos, string, bool) {
	format, _ := err.Msg()
	pos := err.Position()
	if !strings.HasPrefix(format, "missing ',' in ") || !pos.IsValid() {
		return token.NoPos, "", false
	}
	src, rerr := inputfile.ReadFile(pos.Filename())
	if rerr != nil || pos.Offset() >= len(src) || pos.Offset() < 1 || src[pos.Offset()] != ':' {
		return token.NoPos, "", false
	}
	line := src[:pos.Offset()]
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	m := hyphenKeyEnd.FindSubmatchIndex(line)
	if m == nil {
		return token.NoPos, "", false
	}
	return pos.Add(m[2] - len(line)), string(line[m[2]:m[3]]), true
}

// schemaRule reports what does not fit the contract language when no more
// specific rule names the problem: unknown keys, values of the wrong kind,
// missing keys, values that are not concrete, and conflicts that CUE found.
var schemaRule = &Rule{
	ID:       "schema",
	Doc:      "the contract does not fit the schema, and no more specific rule names the problem",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for _, pkg := range p.packages {
			for _, err := range pkg.evalErrs {
				p.reportCUE(pkg, err)
			}
			if pkg.root == nil || len(pkg.loadErrs) > 0 {
				continue
			}
			if pkg.root.kind != kStruct {
				if pkg.root.kind == kError {
					continue // the evaluation error says why
				}
				p.reportf(pkg.root.pos, "the package's root value must be a service, schema.#Service & {...}; it is %s", pkg.root.kind)
				continue
			}
			checkService(p, pkg.root)
		}
	},
}

// A key of a contract struct: the kinds its value may have, and the rule
// that checks it when that is not the schema rule. Rules are named by ID,
// not referenced: the rules consult the shapes, and Go does not allow the
// initialization cycle that references both ways would make.
type keySpec struct {
	kinds []kind
	owner string
	sub   shape // for struct values
}

type shape struct {
	what string // "service", "tool", ...
	keys map[string]keySpec
	// claim returns the ID of the rule that reports an unknown key, if one
	// does.
	claim func(k *node) string
}

var (
	str     = []kind{kString}
	boolean = []kind{kBool}
	integer = []kind{kInt}
	numeric = []kind{kInt, kFloat}
	list    = []kind{kList}
	strukt  = []kind{kStruct}
)

var (
	serviceShape = shape{what: "service", keys: map[string]keySpec{
		"name":        {kinds: str, owner: "service-name"},
		"version":     {kinds: str},
		"description": {owner: "description"},
		"tools":       {kinds: strukt},
		"prompts":     {kinds: strukt},
		"resources":   {kinds: strukt},
		"skills":      {kinds: strukt},
		"handler":     {kinds: str},
		"mcp":         {kinds: strukt, sub: shape{what: "service mcp", keys: map[string]keySpec{"title": {kinds: str}}}},
		"auth":        {kinds: strukt, sub: authShape},
		"budget":      {owner: "token-budget"},
		"groups":      {owner: "group"},
		"upstream":    {owner: "upstream"},
	}}
	toolShape = shape{
		what: "tool",
		keys: map[string]keySpec{
			"description": {owner: "description"},
			"title":       {kinds: str},
			"deprecated":  {kinds: boolean},
			"strict":      {kinds: boolean},
			"annotations": {kinds: strukt, sub: shape{what: "annotations", keys: map[string]keySpec{
				"readOnly":    {kinds: boolean},
				"destructive": {kinds: boolean},
				"idempotent":  {kinds: boolean},
				"openWorld":   {kinds: boolean},
			}}},
			"request":  {owner: "single-request"},
			"response": {kinds: strukt},
			"examples": {kinds: list},
			"mcp":      {kinds: strukt, sub: shape{what: "tool mcp", keys: map[string]keySpec{"name": {kinds: str, owner: "mcp-name"}}}},
			"auth":     {kinds: strukt, sub: authShape},
			"group":    {owner: "group"},
			"defer":    {kinds: boolean},
			"task":     {owner: "task-support"},
		},
		claim: func(k *node) string {
			if strings.Contains(strings.ToLower(k.label), "request") {
				return "single-request"
			}
			return ""
		},
	}
	authShape    = shape{what: "auth", keys: map[string]keySpec{"scopes": {owner: "auth-scope"}}}
	messageShape = shape{what: "message", keys: map[string]keySpec{
		"description": {owner: "description"},
		"fields":      {kinds: strukt},
	}}
	fieldShape = shape{
		what: "field",
		keys: map[string]keySpec{
			"type":             {kinds: str},
			"description":      {owner: "description"},
			"required":         {kinds: boolean},
			"default":          {owner: "default"},
			"enum":             {owner: "enum"},
			"items":            {owner: "flat-fields"},
			"minLength":        {kinds: integer},
			"maxLength":        {kinds: integer},
			"pattern":          {kinds: str},
			"format":           {kinds: str},
			"minimum":          {kinds: numeric},
			"maximum":          {kinds: numeric},
			"exclusiveMinimum": {kinds: numeric},
			"exclusiveMaximum": {kinds: numeric},
			"minItems":         {kinds: integer},
			"maxItems":         {kinds: integer},
			"uniqueItems":      {kinds: boolean},
			"object":           {kinds: boolean},
			"examples":         {kinds: list},
			"deprecated":       {kinds: boolean},
			"mcp":              {kinds: strukt, sub: shape{what: "field mcp", keys: map[string]keySpec{"header": {kinds: str}}}},
		},
		claim: func(k *node) string {
			if nestedKey(k) {
				return "flat-fields"
			}
			return ""
		},
	}
)

// fieldTypes are the types a field may have.
var fieldTypes = []string{"string", "integer", "number", "boolean", "array", "json"}

func checkService(p *Pass, root *node) {
	checkShape(p, root, serviceShape, "service")
	if root.get("version") == nil {
		p.reportf(root.pos, "service has no version; add version: \"1.0.0\" (semantic versioning)")
	} else if v := root.get("version"); v.kind == kString && !semver.MatchString(v.str) {
		p.reportf(v.pos, "version %q is not a semantic version such as 1.2.0", v.str)
	}
	if h := root.get("handler"); h != nil && h.kind == kString && strings.TrimSpace(h.str) == "" {
		p.reportf(h.pos, "handler must name a Go main package relative to the contract, such as \"./cmd/handler\"")
	}
	checkBlank(p, root.get("mcp").get("title"), "mcp title of the service")
	tools := root.get("tools")
	if tools == nil {
		p.reportf(root.pos, "service declares no tools; add tools: my_tool: {description: ..., request: fields: {...}}")
		return
	}
	for _, t := range tools.structFields() {
		where := fmt.Sprintf("tool %q", t.label)
		if t.kind != kStruct {
			if t.kind != kError && t.kind != kIncomplete {
				p.reportf(t.pos, "%s must be a struct with a description and a request; it is %s", where, t.kind)
			}
			continue
		}
		checkShape(p, t, toolShape, where)
		checkBlank(p, t.get("title"), "title of "+where)
		for _, msg := range []string{"request", "response"} {
			m := t.get(msg)
			if m == nil || m.kind != kStruct {
				continue // checkShape or single-request reports it
			}
			mwhere := fmt.Sprintf("%s of %s", msg, where)
			checkShape(p, m, messageShape, mwhere)
			fields := m.get("fields")
			if fields == nil {
				p.reportf(m.pos, "%s has no fields; write fields: {} when there are none", mwhere)
				continue
			}
			for _, f := range fields.structFields() {
				checkField(p, f, fmt.Sprintf("%s field %q of %s", msg, f.label, where))
				for _, sub := range recordFields(f) {
					checkField(p, sub, fmt.Sprintf("%s field %q of %s", msg, f.label+"[]."+sub.label, where))
				}
			}
		}
	}
}

// checkBlank reports a title that is present but blank: a client would
// show nothing where it expects a name.
func checkBlank(p *Pass, n *node, what string) {
	if n != nil && n.kind == kString && strings.TrimSpace(n.str) == "" {
		p.reportf(n.pos, "%s is blank; give it a few words, or drop it", what)
	}
}

func checkField(p *Pass, f *node, where string) {
	if f.kind != kStruct {
		if f.kind != kError && f.kind != kIncomplete {
			p.reportf(f.pos, "%s must be a struct such as {type: \"string\", description: \"...\"}; it is %s", where, f.kind)
		}
		return
	}
	checkShape(p, f, fieldShape, where)
	t := f.get("type")
	switch {
	case t == nil && nestedObject(f):
		// flat-fields reports it: the missing type is the nesting.
	case t == nil:
		p.reportf(f.pos, "%s has no type; add type: one of %s", where, strings.Join(fieldTypes, ", "))
	case t.kind == kString && !slices.Contains(fieldTypes, t.str) && !nestedTypes[t.str]:
		p.reportf(t.pos, "%s has unknown type %q%s; want one of %s", where, t.str, suggestType(t.str, fieldTypes), strings.Join(fieldTypes, ", "))
	}
}

// checkShape reports unknown keys, values of the wrong kind and values
// that are not concrete, for the keys that no other rule owns.
func checkShape(p *Pass, n *node, s shape, where string) {
	for _, k := range n.fields {
		spec, known := s.keys[k.label]
		if !known {
			if s.claim != nil && s.claim(k) != "" {
				continue
			}
			p.reportf(k.pos, "unknown key %q in %s%s", k.label, where, suggest(k.label, keysOf(s)))
			continue
		}
		if k.kind == kIncomplete {
			if t := cueTypeName(k.str); t != "" && (k.label == "type" || k.label == "items") {
				p.reportf(k.pos, "%s of %s must be the string %q, not the CUE type %s", k.label, where, t, k.str)
				continue
			}
			p.reportf(k.pos, "%s of %s must be a concrete value, not %s", k.label, where, k.str)
			continue
		}
		if spec.owner != "" || spec.kinds == nil || k.kind == kError {
			continue
		}
		if (k.kind == kHuge || k.wide) && slices.Contains(spec.kinds, kInt) {
			continue // a number out of range: bounds reports it
		}
		if !slices.Contains(spec.kinds, k.kind) {
			p.reportf(k.pos, "%s of %s must be %s, not %s%s", k.label, where, kindList(spec.kinds), k.kind, nullableHint(k))
			continue
		}
		if spec.sub.keys != nil {
			checkShape(p, k, spec.sub, fmt.Sprintf("%s of %s", k.label, where))
		}
	}
}

func keysOf(s shape) []string {
	keys := make([]string, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func kindList(ks []kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = "a " + k.String()
		if k == kInt {
			names[i] = "an integer"
		}
	}
	return strings.Join(names, " or ")
}

// typeAliases are type names from other languages, for suggestions that
// edit distance would not find.
var typeAliases = map[string]string{
	"str": "string", "text": "string", "int": "integer", "long": "integer",
	"float": "number", "double": "number", "decimal": "number",
	"bool": "boolean", "list": "array",
}

// cueTypeName returns the field type that a CUE type such as int stands
// for, or "".
func cueTypeName(s string) string {
	if contains(fieldTypes, s) {
		return s
	}
	return typeAliases[s]
}

// suggestType is suggest for type names, which knows their aliases.
func suggestType(s string, candidates []string) string {
	if t, ok := typeAliases[strings.ToLower(s)]; ok && contains(candidates, t) {
		return fmt.Sprintf(" (did you mean %q?)", t)
	}
	return suggest(s, candidates)
}

// suggest returns ` (did you mean "x"?)` for the candidate closest to s, if
// one is close enough to be a likely typo.
func suggest(s string, candidates []string) string {
	norm := func(x string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(x))
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		if norm(c) == norm(s) {
			return fmt.Sprintf(" (did you mean %q?)", c)
		}
		if d := editdist.Levenshtein(s, c); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// nullableHint is the advice for a type written as JSON Schema writes a
// nullable one, ["string", "null"], as ported definitions often have it.
func nullableHint(k *node) string {
	if k.label != "type" || k.kind != kList {
		return ""
	}
	var types []string
	null := false
	for _, e := range k.elems {
		switch {
		case e.kind == kString && e.str == "null":
			null = true
		case e.kind == kString:
			types = append(types, e.str)
		}
	}
	if !null || len(types) != 1 {
		return ""
	}
	return fmt.Sprintf("; for a field that may be left out, write type: %q, required: false (a null for an optional field means absent)", types[0])
}
