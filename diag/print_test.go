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

// changes are what toolc diff reports, as lock.Diagnostics makes them.
var changes = []diag.Diagnostic{
	{Pos: diag.Position{File: "shop/shop.cue", Line: 12, Column: 4}, Severity: diag.Error, Rule: "field-renamed", Message: `request field "customer" was renamed`,
		Change: diag.Change{Kind: "breaking", Breaking: true, Service: "shop", Tool: "find_orders", Field: "customer_id"}},
	{Pos: diag.Position{File: "old.lock"}, Severity: diag.Warning, Rule: "tool-removed", Message: `tool "add_note" was removed`,
		Change: diag.Change{Kind: "allowed", Breaking: true, Allowed: true, Service: "notes", Tool: "add_note"}},
	{Pos: diag.Position{File: "shop/shop.cue", Line: 13, Column: 4}, Severity: diag.Notice, Rule: "field-added-optional", Message: `optional request field "page" was added`,
		Change: diag.Change{Kind: "compatible", Service: "shop", Tool: "find_orders", Field: "page"}},
}

// TestChanges: a change prints its kind where a problem prints its
// severity, and its own JSON object; toolc diff's output, which the
// README documents.
func TestChanges(t *testing.T) {
	text := "shop/shop.cue:12:4: breaking: request field \"customer\" was renamed [field-renamed]\n" +
		"old.lock: allowed: tool \"add_note\" was removed [tool-removed]\n" +
		"shop/shop.cue:13:4: compatible: optional request field \"page\" was added [field-added-optional]\n"
	if got := print(t, diag.Text, changes); got != text {
		t.Errorf("text:\n%s\nwant:\n%s", got, text)
	}
	github := "::error file=shop/shop.cue,line=12,col=4,title=field-renamed::request field \"customer\" was renamed\n" +
		"::warning file=old.lock,title=tool-removed::tool \"add_note\" was removed\n" +
		"::notice file=shop/shop.cue,line=13,col=4,title=field-added-optional::optional request field \"page\" was added\n"
	if got := print(t, diag.GitHub, changes); got != github {
		t.Errorf("github:\n%s\nwant:\n%s", got, github)
	}
	json := `[
  {
    "file": "shop/shop.cue",
    "line": 12,
    "column": 4,
    "rule": "field-renamed",
    "breaking": true,
    "allowed": false,
    "service": "shop",
    "tool": "find_orders",
    "field": "customer_id",
    "message": "request field \"customer\" was renamed"
  }
]
`
	if got := print(t, diag.JSON, changes[:1]); got != json {
		t.Errorf("json:\n%s\nwant:\n%s", got, json)
	}
	if e, w := diag.Count(changes); e != 1 || w != 1 {
		t.Errorf("Count = %d errors, %d warnings; want 1 and 1 (a notice is neither)", e, w)
	}
}

// TestList: a problem that no rule names prints without brackets, and a
// List is an error that says each problem on a line.
func TestList(t *testing.T) {
	l := diag.List{
		{Pos: diag.Position{File: "a/x.cue", Line: 2, Column: 2}, Message: "Bad and bad would both be Bad in Go"},
		{Message: "services a and b would both generate x.go"},
	}
	want := "a/x.cue:2:2: error: Bad and bad would both be Bad in Go\n\t\tBad: 1\n\t\t^\nerror: services a and b would both generate x.go\n"
	if got := print(t, diag.Text, l); got != want {
		t.Errorf("text:\n%q\nwant:\n%q", got, want)
	}
	if got, want := l.Error(), "a/x.cue:2:2: error: Bad and bad would both be Bad in Go\nerror: services a and b would both generate x.go"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// hostile holds what a terminal acts on: OSC 52 (write the clipboard),
// a screen clear, a C1 CSI as UTF-8 and as a bare byte, and a
// right-to-left override.
const hostile = "\x1b]52;c;cm0gLXJm\x07\x1b[2J\u009b\x9b\u202e"

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain: tab\tand\nnewline, ü", "plain: tab\tand\nnewline, ü"},
		{"x" + hostile + "y", "x\uFFFD]52;c;cm0gLXJm\uFFFD\uFFFD[2J\uFFFD\uFFFD\uFFFDy"},
		{"\r\x00\x7f\u2066\u2069", "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
	} {
		if got := diag.Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestGitHubPrintable: an annotation is a line of a CI log, which a
// terminal may show too.
func TestGitHubPrintable(t *testing.T) {
	ds := []diag.Diagnostic{{Pos: diag.Position{File: "a" + hostile + ".cue", Line: 1}, Rule: "r", Message: "m" + hostile}}
	got := print(t, diag.GitHub, ds)
	if strings.ContainsAny(got, "\x1b\x07\u009b\u202e") || strings.Contains(got, "\x9b") {
		t.Errorf("github output holds terminal controls: %q", got)
	}
}

// TestPrintableWriter: a stream is cleaned as a string is, even when a
// character, or an escape sequence, is split between two writes.
func TestPrintableWriter(t *testing.T) {
	in := "toolc diff: note: at HEAD, é" + hostile + "ü: not written\n"
	for split := range len(in) + 1 {
		var b bytes.Buffer
		w := diag.NewPrintableWriter(&b)
		for _, part := range []string{in[:split], in[split:]} {
			if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", part, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got, want := b.String(), diag.Printable(in); got != want {
			t.Errorf("split at %d: %q, want %q", split, got, want)
		}
	}
	var b bytes.Buffer
	w := diag.NewPrintableWriter(&b)
	w.Write([]byte("cut \xc3"))
	w.Flush()
	if got := b.String(); got != "cut \uFFFD" {
		t.Errorf("a stream that ends in the middle of a character: %q", got)
	}
}

// TestAcknowledged: an acknowledged warning is left out of text and GitHub
// output and out of the counts, and marked, with its reason, in JSON.
func TestAcknowledged(t *testing.T) {
	ack := diag.Diagnostic{Pos: diag.Position{File: "a/x.cue", Line: 2, Column: 3}, Severity: diag.Warning, Rule: "field-name",
		Message: "mixed styles", Acknowledged: true, Reason: "GitHub's own names"}
	ds := append([]diag.Diagnostic{ack}, sample...)
	if got, want := print(t, diag.Text, ds), print(t, diag.Text, sample); got != want {
		t.Errorf("text with an acknowledged warning:\n%s\nwant:\n%s", got, want)
	}
	if got, want := print(t, diag.GitHub, ds), print(t, diag.GitHub, sample); got != want {
		t.Errorf("github with an acknowledged warning:\n%s\nwant:\n%s", got, want)
	}
	want := `[
  {
    "file": "a/x.cue",
    "line": 2,
    "column": 3,
    "severity": "warning",
    "rule": "field-name",
    "message": "mixed styles",
    "acknowledged": true,
    "reason": "GitHub's own names"
  }
]
`
	if got := print(t, diag.JSON, ds[:1]); got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	if errs, warns := diag.Count(ds); errs != 1 || warns != 1 || diag.Acknowledged(ds) != 1 {
		t.Errorf("Count = %d errors, %d warnings, Acknowledged = %d; want 1, 1, 1", errs, warns, diag.Acknowledged(ds))
	}
	if _, warns := diag.Split(ds); len(warns) != 1 || warns[0].Acknowledged {
		t.Errorf("Split's warnings = %v, want the one not acknowledged", warns)
	}
}
