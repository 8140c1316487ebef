package compiler

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"cuelang.org/go/cue/ast"
	cuelit "cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/schema"
)

// hiddenTextRule refuses text that a reviewer cannot see but a model reads:
// Unicode tag characters (which spell ASCII invisibly, the carrier of "ASCII
// smuggling"), zero-width and bidirectional controls, other invisible
// format characters and fillers, C0 and C1 controls and the terminal
// escapes made of them. Such text is how a poisoned tool definition hides
// its orders from the person who approves it. The characters are those
// of the schema's _#hiddenText, so that `cue vet -c` refuses the same
// strings; a variation selector and a zero-width joiner pass where emoji
// use them.
var hiddenTextRule = &Rule{
	ID:       "hidden-text",
	Doc:      "no text a reviewer cannot see (tag characters, zero-width and bidi controls, C0/C1 controls, terminal escapes) in any name, description, title, enum value, default or example",
	Severity: diag.Error,
	Check: func(p *Pass) {
		re := hiddenTextRE()
		for s := range p.services() {
			walkText(s.root, func(n *node, label bool) {
				text := n.str
				if label {
					text = n.label
				}
				if visibleASCII(text) {
					return
				}
				loc := re.FindStringIndex(text)
				if loc == nil {
					return
				}
				what := "text at " + escapeHidden(n.path)
				if label {
					what = "the key " + strconv.Quote(n.label) + " in " + escapeHidden(strings.TrimSuffix(n.path, "."+n.label))
				}
				p.reportf(n.pos, "%s holds %s, which a reviewer cannot see but a model reads; remove it%s",
					what, describeHidden(text, re, loc), hiddenTags(text))
			})
		}
	},
}

// walkText calls fn for every string of a contract, and for every key
// (label set), depth first.
func walkText(n *node, fn func(n *node, label bool)) {
	if n == nil {
		return
	}
	switch n.kind {
	case kString:
		fn(n, false)
	case kStruct:
		for _, f := range n.fields {
			fn(f, true)
			walkText(f, fn)
		}
	case kList:
		for _, e := range n.elems {
			walkText(e, fn)
		}
	}
}

// visibleASCII reports whether s is printable ASCII, tabs and line breaks:
// nearly every string of a contract, which then needs no regular
// expression.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c >= 0x7f {
			return false
		}
	}
	return true
}

// escapeHidden writes each character of s that is not printable as a Go
// escape, so that a message about hidden text does not hide it again.
func escapeHidden(s string) string {
	if visibleASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08X`, r)
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	return b.String()
}

// describeHidden names the first hidden character at loc and counts the
// others.
func describeHidden(s string, re *regexp.Regexp, loc []int) string {
	// The match may start at the character before a misplaced joiner or
	// variation selector: name the hidden one.
	i := loc[0]
	for j, r := range s[loc[0]:loc[1]] {
		if hiddenKind(r) != "" {
			i = loc[0] + j
			break
		}
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	n := len(re.FindAllStringIndex(s, -1))
	more := ""
	if n > 1 {
		more = fmt.Sprintf(", and %d more", n-1)
	}
	return fmt.Sprintf("U+%04X (%s) at character %d%s", r, hiddenKind(r), utf8.RuneCountInString(s[:i])+1, more)
}

// hiddenKind says what kind of invisible character r is, for messages.
func hiddenKind(r rune) string {
	switch {
	case r == 0x1b:
		return "ESC, which starts a terminal escape sequence"
	case r < 0x20 || r == 0x7f:
		return "a control character"
	case r >= 0x80 && r <= 0x9f:
		return "a C1 control character"
	case r >= 0xe0000 && r <= 0xe007f:
		return "a Unicode tag character"
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return "a bidirectional control"
	case r == 0x200b || r == 0x2060 || r == 0xfeff:
		return "a zero-width space"
	case r == 0x200c || r == 0x200d:
		return "a zero-width joiner outside an emoji or a word of a script that needs one"
	case unicode.Is(unicode.Variation_Selector, r):
		return "a variation selector that does not follow a character it can vary"
	case r == 0x00ad:
		return "a soft hyphen"
	case unicode.Is(unicode.Cf, r):
		return "an invisible format character"
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return "an invisible filler"
	}
	return ""
}

// hiddenTags spells out what tag characters in s say: tag characters
// U+E0020 to U+E007E mirror printable ASCII, and a poisoned description
// hides whole sentences in them.
func hiddenTags(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xe0020 && r <= 0xe007e {
			b.WriteRune(r - 0xe0000)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	spelt := b.String()
	if len(spelt) > 120 {
		spelt = spelt[:120] + "…"
	}
	return "; its tag characters spell " + strconv.Quote(spelt)
}

// hiddenTextRE is the schema's _#hiddenText, the one definition of hidden
// text: `cue vet -c` and toolc check refuse the same strings.
var hiddenTextRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(schemaString("_#hiddenText"))
})

// schemaString returns the value of a top-level string field of the
// embedded schema. It panics if there is none: the schema is part of the
// binary, and a test holds it to what the compiler needs.
func schemaString(label string) string {
	f, err := parser.ParseFile(schema.FileName, schema.Source())
	if err != nil {
		panic(err)
	}
	for _, decl := range f.Decls {
		field, ok := decl.(*ast.Field)
		if !ok {
			continue
		}
		if name, _, _ := ast.LabelName(field.Label); name != label {
			continue
		}
		if lit, ok := field.Value.(*ast.BasicLit); ok {
			s, err := cuelit.Unquote(lit.Value)
			if err != nil {
				panic(fmt.Sprintf("schema %s: %v", label, err))
			}
			return s
		}
	}
	panic("schema has no string " + label)
}

// injectedInstructionRule warns about text aimed at the model rather than
// describing the tool: the markers and phrases of tool poisoning (an
// <IMPORTANT> block, "ignore previous instructions", "do not tell the
// user"), requests to read credential files or send the conversation
// away, and a description that names a tool of another service, which
// steers a model from the tool a user meant (tool shadowing). A warning,
// not an error: a security tool may describe exactly these things, and a
// // toolc:ignore injected-instruction REASON comment acknowledges that.
var injectedInstructionRule = &Rule{
	ID:       "injected-instruction",
	Doc:      "(warning) no instructions aimed at the model in descriptions, titles, enum values, defaults or examples: <IMPORTANT> markers, \"ignore previous instructions\", \"do not tell the user\", credential files to read, a tool of another service",
	Severity: diag.Warning,
	Check: func(p *Pass) {
		others := callableNames(p)
		for s := range p.services() {
			own := map[string]bool{}
			for _, t := range s.root.get("tools").structFields() {
				own[t.label] = true
				if name, _, ok := exposedMCPName(tool{s, t}); ok {
					own[name] = true
				}
			}
			walkText(s.root, func(n *node, label bool) {
				if label || !readByModel(n) {
					return
				}
				lower := strings.ToLower(n.str)
				for _, c := range instructionChecks {
					if !containsAny(lower, c.hints) {
						continue // most texts: no regular expression runs
					}
					if m := c.re.FindString(n.str); m != "" {
						p.reportf(n.pos, "text at %s says %q, %s; describe what the tool does, and leave orders to the user's prompt",
							escapeHidden(n.path), escapeHidden(m), c.what)
					}
				}
				for _, w := range nameWords(n.str) {
					if o, ok := others[w]; ok && !own[w] && o.service != s.name() {
						p.reportf(n.pos, "text at %s names %s, a tool of service %q (%s): a description that steers the model to another service's tool can take calls from the tool the user meant (tool shadowing); name only this service's tools",
							escapeHidden(n.path), strconv.Quote(w), o.service, p.position(o.pos))
						break
					}
				}
			})
		}
	},
}

// instructionChecks are the phrases of tool poisoning, each with what it
// is. They are matched case-insensitively against each text a model
// reads.
var instructionChecks = []struct {
	re *regexp.Regexp
	// hints are lower-case words that every match holds one of: the
	// expression runs only on a text that holds one.
	hints []string
	what  string
}{
	{regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical)\s*>|\[/?INST\]|<<\s*/?SYS\s*>>|<\|(im_start|im_end|system|endoftext)\|>`),
		[]string{"<", "[/inst]", "[inst]"}, "a marker that addresses the model, not the user"},
	{regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+|my\s+)?(previous|prior|above|earlier|preceding|other|existing|system)\s+(instructions?|prompts?|messages|rules|directions|guidelines)`),
		[]string{"ignore", "disregard", "forget", "override"}, "an order to the model to drop its instructions"},
	{regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never)\s+(tell|inform|mention\s+(this\s+|it\s+)?to|notify|alert|reveal\s+(this\s+|it\s+)?to)\s+(the\s+)?user\b|\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?user\b|\bwithout\s+(the\s+)?user('s)?\s+(knowing|knowledge|noticing)\b|\buser\s+(must|should)\s+not\s+(know|see|be\s+told|be\s+informed|notice)\b|\bhide\s+(this|it)\s+from\s+the\s+user\b|\b(do\s+not|don'?t|never)\s+(mention|reveal|disclose)\s+(that\s+you|this\s+to|these\s+instructions)\b`),
		[]string{"user", "mention", "reveal", "disclose"}, "an order to keep something from the user"},
	{regexp.MustCompile(`(?i)\b(read|cat|open|send|include|pass|upload|copy|attach|print|output|access|fetch|load)\b[^.\n]{0,40}(~/\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|/etc/(passwd|shadow)\b|\.aws/credentials\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|~/\.cursor\b|\.git-credentials\b|~/\.netrc\b)`),
		[]string{".ssh", "id_", "/etc/", ".aws", "mcp.json", "claude_desktop", ".cursor", ".git-credentials", ".netrc"},
		"a request to read a credential or configuration file, which a tool has no reason to make"},
	{regexp.MustCompile(`(?i)\b(send|forward|post|upload|pass|include|append|attach)\b[^.\n]{0,60}\b((conversation|chat)\s+history|system\s+prompt|(previous|prior|earlier)\s+messages|whole\s+conversation)\b`),
		[]string{"history", "prompt", "messages", "conversation"}, "a request for the conversation, which a tool has no reason to receive"},
	{regexp.MustCompile(`(?i)\bpass\s+(its|their)\s+contents?\s+as\b`),
		[]string{"pass"}, "a request to smuggle what the model read into an argument"},
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// nameWords returns the words of a text that could be tool names:
// snake_case, kebab-case or lowerCamelCase words of two parts or more, so
// that plain words ("search") never count as another service's tool.
func nameWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		w = strings.Trim(w, "_-")
		if strings.ContainsAny(w, "_-") || len(w) > 1 && strings.ToLower(w[1:]) != w[1:] && w[0] >= 'a' && w[0] <= 'z' {
			out = append(out, w)
		}
	}
	return out
}

// readByModel reports whether a string is prose that a model reads: a
// description or title, or a value of an enum, a default or an example.
func readByModel(n *node) bool {
	if n.label == "description" || n.label == "title" {
		return true
	}
	return strings.Contains(n.path, ".enum[") || strings.Contains(n.path, ".default") || strings.Contains(n.path, ".examples[")
}

// A callable is a tool as another service's text may name it.
type callable struct {
	service string
	pos     token.Pos
}

// callableNames maps the names by which a client can call each tool of the
// run, its function name and its MCP name, to the tool's service.
func callableNames(p *Pass) map[string]callable {
	names := map[string]callable{}
	for t := range p.tools() {
		c := callable{t.service.name(), t.node.pos}
		if _, dup := names[t.node.label]; !dup {
			names[t.node.label] = c
		}
		if name, _, ok := exposedMCPName(t); ok {
			if _, dup := names[name]; !dup {
				names[name] = c
			}
		}
	}
	return names
}
