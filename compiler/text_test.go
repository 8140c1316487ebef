package compiler

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// hiddenAlways reports whether r is hidden wherever it stands: a C0
// control but tab and line breaks, DEL, a C1 control, a format character
// (Cf) but the joiners and the prepended concatenation marks (visible
// signs such as U+0600), a default-ignorable filler (U+3164 and the like),
// a Mongolian free variation selector or an ideographic variation
// selector.
func hiddenAlways(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x200c || r == 0x200d:
		return false
	case unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return true
	case r >= 0x180b && r <= 0x180f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return false
}

// class writes the runes for which in is true as a regular expression
// class body, in ranges.
func class(in func(rune) bool) string {
	var b strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !in(r) {
			continue
		}
		lo := r
		for r+1 <= unicode.MaxRune && in(r+1) {
			r++
		}
		if lo == r {
			fmt.Fprintf(&b, `\x{%X}`, lo)
		} else {
			fmt.Fprintf(&b, `\x{%X}-\x{%X}`, lo, r)
		}
	}
	return b.String()
}

// hiddenTextPattern derives the schema's _#hiddenText from Go's Unicode
// tables. Besides the characters hidden everywhere, it matches:
//   - a variation selector U+FE00..U+FE0F at the start, or after an ASCII
//     character (but U+FE0F after the keycap bases # * 0-9), white space,
//     a joiner or another selector: a run of them, or one after each
//     letter, carries bytes invisibly;
//   - a zero-width joiner or non-joiner at either end, next to ASCII or
//     white space, or next to another joiner: emoji sequences and the
//     scripts that need one join two non-ASCII characters.
func hiddenTextPattern() string {
	white := func(r rune) bool { return unicode.Is(unicode.White_Space, r) && r > 0x7f }
	vs := `\x{FE00}-\x{FE0F}`
	j := `\x{200C}\x{200D}`
	notKeycap := func(r rune) bool { return r <= 0x7f && !strings.ContainsRune("#*0123456789", r) }
	return strings.Join([]string{
		"[" + class(hiddenAlways) + "]",
		"(?:^|[" + class(notKeycap) + class(white) + vs + j + "])[" + vs + "]",
		`[#*0-9][\x{FE00}-\x{FE0E}]`,
		"(?:^|[" + `\x{0}-\x{7F}` + class(white) + j + "])[" + j + "]",
		"[" + j + "](?:$|[" + `\x{0}-\x{7F}` + class(white) + vs + j + "])",
	}, "|")
}

func TestHiddenTextPattern(t *testing.T) {
	want := hiddenTextPattern()
	if got := schemaString("_#hiddenText"); got != want {
		t.Errorf("schema.cue's _#hiddenText is not what Go's Unicode tables give; make it\n_#hiddenText: %s", strings.ReplaceAll(fmt.Sprintf("%q", want), `\\`, `\\`))
	}
}
