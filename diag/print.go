package diag

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Format is an output format for diagnostics.
type Format int

const (
	// Text is `file:line:col: severity: message [rule]`, then the source line
	// and a caret under the column.
	Text Format = iota
	// JSON is one array of {"file","line","column","severity","rule","message"}.
	JSON
	// GitHub is one GitHub Actions workflow command per diagnostic, which
	// GitHub shows as an annotation on the pull request.
	GitHub
)

var formatNames = []string{Text: "text", JSON: "json", GitHub: "github"}

// FormatNames lists the names that ParseFormat accepts.
func FormatNames() []string { return append([]string(nil), formatNames...) }

// ParseFormat parses a format name: text, json or github.
func ParseFormat(name string) (Format, error) {
	for f, n := range formatNames {
		if n == name {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(formatNames, ", "))
}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// SourceFunc returns the contents of a file named in a Position. Text output
// uses it to quote the offending line; it may be nil, and an error only
// leaves the quote out.
type SourceFunc func(file string) ([]byte, error)

// Print writes the diagnostics in the given format.
func Print(w io.Writer, f Format, ds []Diagnostic, src SourceFunc) error {
	bw := bufio.NewWriter(w)
	switch f {
	case JSON:
		printJSON(bw, ds)
	case GitHub:
		printGitHub(bw, ds)
	default:
		printText(bw, ds, src)
	}
	return bw.Flush()
}

func printText(w *bufio.Writer, ds []Diagnostic, src SourceFunc) {
	lines := sourceLines{src: src, files: map[string][][]byte{}}
	for _, d := range ds {
		w.WriteString(printable(d.String(), true))
		w.WriteByte('\n')
		line := lines.line(d.Pos.File, d.Pos.Line)
		if line == nil {
			continue
		}
		w.WriteByte('\t')
		w.WriteString(printable(string(line), false))
		w.WriteByte('\n')
		w.WriteByte('\t')
		w.WriteString(caretIndent(line, d.Pos.Column))
		w.WriteString("^\n")
	}
}

// printable returns s with every character that a terminal would act on
// rather than show replaced by U+FFFD: control characters but tab (and
// newline, when newlines is set), and the bidirectional overrides and
// isolates that reorder what is shown ("Trojan Source"). A source line or
// a message comes from a contract that may be someone else's: a comment
// holding ESC ] 52 would otherwise write to the clipboard of whoever runs
// toolc check on it, and ESC [ 2 J clear their screen. One character
// stands for one, so the caret still lines up.
func printable(s string, newlines bool) string {
	bad := func(r rune) bool {
		switch {
		case r == '\t', r == '\n' && newlines:
			return false
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return true
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return true
		case r == utf8.RuneError:
			return true // a byte that is no UTF-8, such as 0x9b, a C1 CSI to an 8-bit terminal
		}
		return false
	}
	if strings.IndexFunc(s, bad) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if bad(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

// caretIndent returns the white space that puts a caret under column col
// (a 1-based byte offset) of line, keeping tabs so that it lines up
// whatever the terminal's tab width.
func caretIndent(line []byte, col int) string {
	if col < 1 {
		return ""
	}
	prefix := line[:min(col-1, len(line))]
	var b strings.Builder
	for _, r := range string(prefix) {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

type sourceLines struct {
	src   SourceFunc
	files map[string][][]byte
}

func (s *sourceLines) line(file string, n int) []byte {
	if s.src == nil || file == "" || n < 1 {
		return nil
	}
	lines, ok := s.files[file]
	if !ok {
		data, err := s.src(file)
		if err == nil {
			lines = bytes.Split(data, []byte("\n"))
		}
		s.files[file] = lines
	}
	if n > len(lines) {
		return nil
	}
	return bytes.TrimRight(lines[n-1], "\r")
}

type jsonDiagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
}

func printJSON(w *bufio.Writer, ds []Diagnostic) {
	out := make([]jsonDiagnostic, len(ds))
	for i, d := range ds {
		out[i] = jsonDiagnostic{d.Pos.File, d.Pos.Line, d.Pos.Column, d.Severity, d.Rule, d.Message}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(out) // cannot fail: plain strings and ints into a buffered writer
}

func printGitHub(w *bufio.Writer, ds []Diagnostic) {
	for _, d := range ds {
		fmt.Fprintf(w, "::%s ", d.Severity)
		props := []string{}
		if d.Pos.File != "" {
			props = append(props, "file="+escapeProperty(d.Pos.File))
		}
		if d.Pos.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", d.Pos.Line))
		}
		if d.Pos.Column > 0 {
			props = append(props, fmt.Sprintf("col=%d", d.Pos.Column))
		}
		props = append(props, "title="+escapeProperty(d.Rule))
		fmt.Fprintf(w, "%s::%s\n", strings.Join(props, ","), escapeData(d.Message))
	}
}

// GitHub's workflow commands percent-encode the characters that would end
// the message or a property early.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
