package jsondepth

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{`1`, 0},
		{`"[{"`, 0},
		{`{}`, 1},
		{`[[],[[]]]`, 3},
		{`{"a":{"b":[1,{"c":"]]]"}]}}`, 4},
		{`{"a\"[":"\\"}`, 1}, // an escaped quote, then an escaped backslash before the closing quote
		{`["\\\"[["]`, 1},
		{strings.Repeat("[", 1001) + strings.Repeat("]", 1001), 1001},
		{`[{"a":"unterminated`, 2},
	} {
		if got := Of([]byte(tc.text)); got != tc.want {
			t.Errorf("Of(%.40q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// FuzzOf holds Of to encoding/json's tokens for valid texts.
func FuzzOf(f *testing.F) {
	for _, s := range []string{`{}`, `[1,[2,{"a":"[\""}]]`, `"x"`, `[[[]]]`, `{"a":[[]],"a":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !json.Valid([]byte(text)) {
			return
		}
		if got, want := Of([]byte(text)), tokenDepth(text); got != want {
			t.Fatalf("Of(%q) = %d, want %d", text, got, want)
		}
	})
}

// tokenDepth is the deepest nesting of the delimiters encoding/json reads.
func tokenDepth(text string) int {
	d := json.NewDecoder(strings.NewReader(text))
	n, deepest := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			n++
			deepest = max(deepest, n)
		case json.Delim('}'), json.Delim(']'):
			n--
		}
	}
}
