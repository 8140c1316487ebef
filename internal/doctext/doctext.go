// Package doctext finds text in toolc's documentation, README.md and the
// reference pages docs/*.md, for the tests that hold the documentation to
// the code: a test names a heading or a marker, and gets the text under
// it wherever it lives, so that moving a section from one page to another
// breaks no test.
package doctext

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePath is the module whose root holds the documentation.
const modulePath = "github.com/toolc/toolc"

// File is one page of the documentation.
type File struct {
	Path string // slash-separated, relative to the module root: "README.md", "docs/serving.md"
	Text string
}

// Docs is the documentation of one checkout: README.md first, then the
// pages of docs/ in name order.
type Docs struct {
	Root  string // the module root, absolute
	Files []File
}

// Load reads README.md and docs/*.md under root.
func Load(root string) (*Docs, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(pages)
	d := &Docs{Root: root}
	for _, p := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, p)
		d.Files = append(d.Files, File{Path: filepath.ToSlash(rel), Text: string(data)})
	}
	return d, nil
}

// FindRoot returns the root of the toolc module that holds dir: the
// nearest directory at or above it whose go.mod declares the module.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
			regexp.MustCompile(`(?m)^module\s+`+regexp.QuoteMeta(modulePath)+`\s*$`).Match(data) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module %s at or above %s", modulePath, dir)
		}
	}
}

// Read loads the documentation of the checkout that holds the working
// directory (a test's package directory), and fails t if it cannot.
func Read(t testing.TB) *Docs {
	t.Helper()
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// All returns every page, each followed by a blank line, for a test that
// looks for a quotation anywhere in the documentation.
func (d *Docs) All() string {
	var b strings.Builder
	for _, f := range d.Files {
		b.WriteString(f.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// File returns the page at path ("README.md", "docs/cli.md").
func (d *Docs) File(path string) (File, bool) {
	for _, f := range d.Files {
		if f.Path == path {
			return f, true
		}
	}
	return File{}, false
}

// After returns the rest of the page that holds marker, after its first
// occurrence, and that page's path. A marker found on two pages is an
// error: a test must name what it follows unambiguously.
func (d *Docs) After(marker string) (rest, path string, err error) {
	var found []string
	for _, f := range d.Files {
		if _, after, ok := strings.Cut(f.Text, marker); ok {
			if found == nil {
				rest, path = after, f.Path
			}
			found = append(found, f.Path)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("no page of the documentation (README.md, docs/*.md) has %q", marker)
	case 1:
		return rest, path, nil
	}
	return "", "", fmt.Errorf("%q is on more than one page: %s", marker, strings.Join(found, ", "))
}

// Heading is a heading of a page, outside its code blocks.
type Heading struct {
	Path  string // the page
	Level int    // 1 for #, 2 for ##, ...
	Title string // the text after the #s, as written: "`toolc check`"
	Line  int    // 1-based
	start int    // byte offset of the heading line
	end   int    // byte offset of the end of its section
}

// Anchor is the fragment that GitHub gives the heading: lower case,
// punctuation dropped but for hyphens and underscores, spaces as hyphens
// (without the -1, -2 that a repeated title gets).
func (h Heading) Anchor() string { return Anchor(h.Title) }

// Anchor is GitHub's fragment for a heading's title.
func Anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || isWord(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isWord(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f && (r >= 0xc0 && r != 0xd7 && r != 0xf7)
}

var headingLine = regexp.MustCompile(`^(#{1,6}) +(.*?)\s*$`)

// Headings returns the headings of a page, outside fenced code blocks,
// each with the extent of its section: up to the next heading of its
// level or a higher one.
func Headings(f File) []Heading {
	var hs []Heading
	inFence := ""
	off := 0
	for i, line := range strings.SplitAfter(f.Text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence := fenceOf(trimmed); fence != "" {
			switch {
			case inFence == "":
				inFence = fence
			case strings.HasPrefix(trimmed, inFence) && strings.Trim(trimmed, fence[:1]) == "":
				inFence = ""
			}
		} else if inFence == "" {
			if m := headingLine.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil {
				hs = append(hs, Heading{Path: f.Path, Level: len(m[1]), Title: m[2], Line: i + 1, start: off})
			}
		}
		off += len(line)
	}
	for i := range hs {
		hs[i].end = len(f.Text)
		for _, next := range hs[i+1:] {
			if next.Level <= hs[i].Level {
				hs[i].end = next.start
				break
			}
		}
	}
	return hs
}

// fenceOf returns the fence that opens or closes a code block on a
// trimmed line ("```", "~~~~"), or "".
func fenceOf(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// Section returns the section whose heading's title is title, at any
// level and on any page: the text after the heading line, up to the next
// heading of its level or a higher one. A title on two pages, or twice on
// one, is an error.
func (d *Docs) Section(title string) (body string, h Heading, err error) {
	var found []Heading
	var text string
	for _, f := range d.Files {
		for _, x := range Headings(f) {
			if x.Title == title {
				if found == nil {
					text = f.Text
				}
				found = append(found, x)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", Heading{}, fmt.Errorf("no page of the documentation (README.md, docs/*.md) has a heading %q", title)
	case 1:
		h = found[0]
		body = text[h.start:h.end]
		_, body, _ = strings.Cut(body, "\n")
		return body, h, nil
	}
	var where []string
	for _, x := range found {
		where = append(where, fmt.Sprintf("%s:%d", x.Path, x.Line))
	}
	return "", Heading{}, fmt.Errorf("the heading %q is on more than one page or line: %s", title, strings.Join(where, ", "))
}

// Block is a fenced code block.
type Block struct {
	Path string // the page
	Line int    // 1-based line of its opening fence
	Lang string // the info string's first word: "sh", "go", "" ...
	Text string // its content, each line ending in a newline
	// After is the line after the closing fence, where a doctext
	// comment says who runs the block ("<!-- doctext: ... -->").
	After string
}

// Blocks returns the fenced code blocks of text, a page or a part of one
// (path names it in the blocks). The fences of a block in a list item may
// be indented; its lines lose that indentation.
func Blocks(path, text string) []Block {
	var bs []Block
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		fence := fenceOf(trimmed)
		if fence == "" {
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		b := Block{Path: path, Line: i + 1, Lang: strings.Fields(trimmed[len(fence):] + " x")[0]}
		if b.Lang == "x" {
			b.Lang = ""
		}
		var body strings.Builder
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				break
			}
			l := lines[j]
			if n := len(l) - len(strings.TrimLeft(l, " ")); n >= indent {
				l = l[indent:]
			} else {
				l = strings.TrimLeft(l, " ")
			}
			body.WriteString(l)
		}
		b.Text = body.String()
		if j+1 < len(lines) {
			b.After = strings.TrimSpace(lines[j+1])
		}
		bs = append(bs, b)
		i = j
	}
	return bs
}

// SectionBlocks returns the fenced code blocks of the section titled
// title (see Section).
func (d *Docs) SectionBlocks(title string) ([]Block, error) {
	body, h, err := d.Section(title)
	if err != nil {
		return nil, err
	}
	bs := Blocks(h.Path, body)
	for i := range bs {
		bs[i].Line += h.Line
	}
	return bs, nil
}

// ErrNoBlock is returned by BlockAfter when no block follows the marker.
var ErrNoBlock = errors.New("no code block follows")

// BlockAfter returns the first fenced code block after marker (see After).
func (d *Docs) BlockAfter(marker string) (Block, error) {
	rest, path, err := d.After(marker)
	if err != nil {
		return Block{}, err
	}
	bs := Blocks(path, rest)
	if len(bs) == 0 {
		return Block{}, fmt.Errorf("%s: after %q: %w", path, marker, ErrNoBlock)
	}
	return bs[0], nil
}

// MustSection is Section for a test: it fails t when the section is
// missing or ambiguous.
func (d *Docs) MustSection(t testing.TB, title string) string {
	t.Helper()
	body, _, err := d.Section(title)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// MustAfter is After for a test: it fails t when the marker is missing
// or ambiguous.
func (d *Docs) MustAfter(t testing.TB, marker string) string {
	t.Helper()
	rest, _, err := d.After(marker)
	if err != nil {
		t.Fatal(err)
	}
	return rest
}
