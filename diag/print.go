package diag

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format is an output format for diagnostics.
type Format int

const (
	// Text is `file:line:col: severity: message [rule]`, then the source line
	// and a caret under the column. Acknowledged warnings are left out.
	Text Format = iota
	// JSON is one array of {"file","line","column","severity","rule","message"},
	// with "acknowledged": true and the "reason" on an acknowledged
	// warning.
	JSON
	// GitHub is one GitHub Actions workflow command per diagnostic, which
	// GitHub shows as an annotation on the pull request. Acknowledged
	// warnings are left out.
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
		if d.Acknowledged {
			continue
		}
		w.WriteString(Printable(d.String()))
		w.WriteByte('\n')
		line := lines.line(d.Pos.File, d.Pos.Line)
		if line == nil {
			continue
		}
		w.WriteByte('\t')
		w.WriteString(Printable(string(line)))
		w.WriteByte('\n')
		w.WriteByte('\t')
		w.WriteString(caretIndent(line, d.Pos.Column))
		w.WriteString("^\n")
	}
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

// jsonDiagnostic is the JSON form of a problem, which DESIGN.md pins.
type jsonDiagnostic struct {
	File         string   `json:"file"`
	Line         int      `json:"line"`
	Column       int      `json:"column"`
	Severity     Severity `json:"severity"`
	Rule         string   `json:"rule"`
	Message      string   `json:"message"`
	Acknowledged bool     `json:"acknowledged,omitempty"`
	Reason       string   `json:"reason,omitempty"`
}

// jsonChange is the JSON form of a change, which docs/lock.md documents.
type jsonChange struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Rule     string `json:"rule"`
	Breaking bool   `json:"breaking"`
	Allowed  bool   `json:"allowed"`
	Service  string `json:"service"`
	Tool     string `json:"tool"`
	Field    string `json:"field"`
	Message  string `json:"message"`
	// Tokens are a token-growth change's counts (package tokens).
	Tokens *TokenCounts `json:"tokens,omitempty"`
}

func printJSON(w *bufio.Writer, ds []Diagnostic) {
	out := make([]any, len(ds))
	for i, d := range ds {
		if c := d.Change; c.Kind != "" {
			out[i] = jsonChange{d.Pos.File, d.Pos.Line, d.Pos.Column, d.Rule, c.Breaking, c.Allowed, c.Service, c.Tool, c.Field, d.Message, c.Tokens}
		} else {
			out[i] = jsonDiagnostic{d.Pos.File, d.Pos.Line, d.Pos.Column, d.Severity, d.Rule, d.Message, d.Acknowledged, d.Reason}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(out) // cannot fail: plain strings and ints into a buffered writer
}

func printGitHub(w *bufio.Writer, ds []Diagnostic) {
	for _, d := range ds {
		if d.Acknowledged {
			continue
		}
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
		if d.Rule != "" {
			props = append(props, "title="+escapeProperty(d.Rule))
		}
		fmt.Fprintf(w, "%s::%s\n", strings.Join(props, ","), escapeData(d.Message))
	}
}

// GitHub's workflow commands percent-encode the characters that would end
// the message or a property early; what is left goes through Printable,
// as a CI log is read in a terminal too.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return Printable(dataEscaper.Replace(s)) }
func escapeProperty(s string) string { return Printable(propertyEscaper.Replace(s)) }
