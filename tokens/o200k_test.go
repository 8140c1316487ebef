package tokens

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// tricky are texts that take each alternative of the split pattern, and
// its backtracking: contractions, case runs, marks, numbers, punctuation
// before newlines and slashes, and runs of spaces before words, numbers
// and the end.
var tricky = []string{
	"", "a", "A", "1", " ", "\n", "'", "'s",
	"hello world", "Hello World", "HELLO world", "HTTPServer", "iPhone", "McDonald's",
	"I'm you're we've he'll she'd it's IT'S DON'T 'RE 'Ll",
	"don't stop", "o'clock", "rock'n'roll", "x'", "x'y",
	"12345678", "1.5e10", "v1.2.3", "３４５", "Ⅻ", "½",
	"a  b", "a   b", "a \tb", "a\n\nb", "a \n \n b", "a\r\nb", " \n", "\n ", "   ", "x   ", "   1", " \n1",
	"foo,\n// bar", "});\n\n// next", "a//b", "://\n/", "!!!\n\n/x", " !?", "  !?", "\t!?",
	"é", "e\u0301", "\u0301x", "x\u0301\u0301Y", "ǅungla", "ǈ", "ʰa", "Aʰ", "ʰA",
	"日本語のテキスト", "中文 文本", "한국어 텍스트", "Ελληνικά ΚΕΙΜΕΝΟ", "Русский Текст",
	"emoji 🙂 and 👍🏽 and 🇩🇪", "\u00a0nbsp\u00a0", "\u3000ideo\u3000", "\u2028line\u2029para",
	"\u0085nel", "\x00\x01\x7f", "tab\there", "\v\f",
	`{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Berlin"}}}`,
	"type query_weather = (_: {\n// City name, e.g. Berlin\ncity: string,\ndays?: number, // default: 3\n}) => any;\n\n",
	strings.Repeat("a", 300), strings.Repeat("ab ", 100), strings.Repeat("\n", 50), strings.Repeat(" ", 50) + "x",
	"\xff\xfe invalid", "a\xffb",
}

func TestSplitMatchesTiktoken(t *testing.T) {
	ref := codec.NewO200kBase()
	texts := append([]string{}, tricky...)
	// Every projection of the examples' compiled catalog.
	files, _ := filepath.Glob("../examples/*/toolc.catalog.json")
	files = append(files, "../catalog/testdata/weather.catalog.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		if !strings.Contains(s, "\xff") && !tiktokenGoWrong(s) {
			want, err := ref.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := o200kBase().count(s); got != want {
				t.Errorf("count(%.60q) = %d, tiktoken-go counts %d", s, got, want)
			}
		}
		// The pieces make up the text.
		var b strings.Builder
		for off := 0; off < len(s); {
			n := pieceLen(s[off:])
			if n <= 0 {
				t.Fatalf("pieceLen(%.40q) = %d", s[off:], n)
			}
			b.WriteString(s[off : off+n])
			off += n
		}
		if b.String() != s {
			t.Errorf("the pieces of %.40q do not make it up", s)
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	ref := codec.NewO200kBase()
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		if !utf8.ValidString(s) || tiktokenGoWrong(s) {
			// tiktoken-go reads each invalid byte as its own U+FFFD;
			// toolc only counts text that encoding/json or CUE wrote.
			return
		}
		want, err := ref.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := o200kBase().count(s); got != want {
			t.Errorf("count(%q) = %d, tiktoken-go counts %d", s, got, want)
		}
	})
}

// tiktokenGoWrong reports whether tiktoken-go splits s otherwise than
// tiktoken and js-tiktoken do (TestReference has such texts): it drops
// U+007F, and it splits a run of whitespace at a newline that a space
// follows before the next newline, where tiktoken keeps the run up to
// its last newline.
func tiktokenGoWrong(s string) bool {
	return strings.ContainsRune(s, 0x7f) || splitsAtNewline.MatchString(s)
}

var splitsAtNewline = regexp.MustCompile(`[\r\n][\t\v\f \x{85}\p{Z}]+[\r\n]`)
