package diag_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolc/toolc/diag"
)

var sample = []diag.Diagnostic{
	{Pos: diag.Position{File: "a/x.cue", Line: 2, Column: 3}, Severity: diag.Error, Rule: "tool-name", Message: `tool name "Bad" must be snake_case`},
	{Pos: diag.Position{File: "a/x.cue", Line: 3, Column: 9}, Severity: diag.Warning, Rule: "provider-limit", Message: "100% lost, in: two\nlines"},
}

func source(file string) ([]byte, error) {
	if file != "a/x.cue" {
		return nil, fmt.Errorf("no such file %s", file)
	}
	return []byte("package x\n\tBad: 1\n\tü é: x\n"), nil
}

func print(t *testing.T, f diag.Format, ds []diag.Diagnostic) string {
	t.Helper()
	var b bytes.Buffer
	if err := diag.Print(&b, f, ds, source); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestText(t *testing.T) {
	got := print(t, diag.Text, sample)
	want := "a/x.cue:2:3: error: tool name \"Bad\" must be snake_case [tool-name]\n" +
		"\t\tBad: 1\n" +
		"\t\t ^\n" +
		"a/x.cue:3:9: warning: 100% lost, in: two\nlines [provider-limit]\n" +
		"\t\tü é: x\n" +
		// Column 9 is a byte offset: the caret sits under "x", after two
		// two-byte letters, so it is indented by runes, not bytes.
		"\t\t     ^\n"
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}

func TestTextWithoutSource(t *testing.T) {
	ds := []diag.Diagnostic{{Pos: diag.Position{File: "gone.cue", Line: 1, Column: 1}, Rule: "syntax", Message: "m"}}
	if got := print(t, diag.Text, ds); got != "gone.cue:1:1: error: m [syntax]\n" {
		t.Errorf("got %q", got)
	}
	ds = []diag.Diagnostic{{Rule: "schema", Message: "no position"}}
	if got := print(t, diag.Text, ds); got != "error: no position [schema]\n" {
		t.Errorf("got %q", got)
	}
}

func TestJSON(t *testing.T) {
	got := print(t, diag.JSON, sample[:1])
	want := `[
  {
    "file": "a/x.cue",
    "line": 2,
    "column": 3,
    "severity": "error",
    "rule": "tool-name",
    "message": "tool name \"Bad\" must be snake_case"
  }
]
`
	if got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	if got := print(t, diag.JSON, nil); got != "[]\n" {
		t.Errorf("no diagnostics = %q, want []", got)
	}
}

func TestGitHub(t *testing.T) {
	got := print(t, diag.GitHub, sample)
	want := "::error file=a/x.cue,line=2,col=3,title=tool-name::tool name \"Bad\" must be snake_case\n" +
		"::warning file=a/x.cue,line=3,col=9,title=provider-limit::100%25 lost, in: two%0Alines\n"
	if got != want {
		t.Errorf("github:\n%s\nwant:\n%s", got, want)
	}
	odd := []diag.Diagnostic{{Pos: diag.Position{File: "a,b:c.cue", Line: 1}, Rule: "r", Message: "m"}}
	if got := print(t, diag.GitHub, odd); got != "::error file=a%2Cb%3Ac.cue,line=1,title=r::m\n" {
		t.Errorf("escaped properties: %q", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, name := range diag.FormatNames() {
		f, err := diag.ParseFormat(name)
		if err != nil || f.String() != name {
			t.Errorf("ParseFormat(%q) = %v, %v", name, f, err)
		}
	}
	if _, err := diag.ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "text, json, github") {
		t.Errorf("ParseFormat(xml) error = %v", err)
	}
}

func TestSortCompact(t *testing.T) {
	ds := []diag.Diagnostic{sample[1], sample[0], sample[1]}
	diag.Sort(ds)
	ds = diag.Compact(ds)
	if len(ds) != 2 || ds[0] != sample[0] || ds[1] != sample[1] {
		t.Errorf("sorted and compacted = %v", ds)
	}
	if e, w := diag.Count(ds); e != 1 || w != 1 || !diag.HasErrors(ds) || diag.HasErrors(ds[1:]) {
		t.Errorf("Count = %d, %d", e, w)
	}
}

// TestTextPrintable: a source line or a message that holds characters a
// terminal acts on (ESC sequences, other controls, bidirectional
// overrides) is printed with U+FFFD in their place, one for one, so that
// the caret still lines up: a contract under review cannot clear the
// reviewer's screen or write to their clipboard (OSC 52) through toolc
// check.
func TestTextPrintable(t *testing.T) {
	src := func(string) ([]byte, error) {
		return []byte("package x\n\tx: 1 // \x1b]52;c;cm0gLXJm\x07 \x1b[2J\u202e\x9b\tBad: 2\n"), nil
	}
	ds := []diag.Diagnostic{{Pos: diag.Position{File: "a/x.cue", Line: 2, Column: 36}, Severity: diag.Error, Rule: "schema", Message: "field \"\x1b[31mred\" is\nnot allowed"}}
	var b bytes.Buffer
	if err := diag.Print(&b, diag.Text, ds, src); err != nil {
		t.Fatal(err)
	}
	// Column 36 is the B of Bad; \x9b, a byte that is no UTF-8, counts
	// as one character, as every invalid byte does.
	want := "a/x.cue:2:36: error: field \"\uFFFD[31mred\" is\nnot allowed [schema]\n" +
		"\t\tx: 1 // \uFFFD]52;c;cm0gLXJm\uFFFD \uFFFD[2J\uFFFD\uFFFD\tBad: 2\n" +
		"\t\t" + strings.Repeat(" ", 31) + "\t^\n"
	if got := b.String(); got != want {
		t.Errorf("text:\n%q\nwant:\n%q", got, want)
	}
}
