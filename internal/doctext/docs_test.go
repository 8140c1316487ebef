package doctext_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/doctext"
)

// link is a Markdown link of a page, outside code.
type link struct {
	page string
	line int
	url  string
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// links returns the inline links of a page, outside code blocks and code
// spans. A code span that a line break splits is joined first, as
// Markdown reads it.
func links(f doctext.File) []link {
	var ls []link
	lines := strings.Split(f.Text, "\n")
	inFence := false
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		text, first := lines[i], i
		// A paragraph's code span may go on over the line's end: join
		// until the backticks pair up.
		for strings.Count(text, "`")%2 == 1 && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			text += " " + lines[i]
		}
		text = codeSpan.ReplaceAllString(text, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			ls = append(ls, link{f.Path, first + 1, m[1]})
		}
	}
	return ls
}

// anchors returns the fragments of a page's headings, as GitHub makes
// them: a repeated one gets -1, -2, ...
func anchors(f doctext.File) map[string]bool {
	as := map[string]bool{}
	for _, h := range doctext.Headings(f) {
		a := h.Anchor()
		for n := 1; as[a]; n++ {
			a = fmt.Sprintf("%s-%d", h.Anchor(), n)
		}
		as[a] = true
	}
	return as
}

// TestLinks checks that every relative link of README.md and docs/*.md
// reaches a file or directory of the checkout, and that every #anchor
// names a heading of the page it points into.
func TestLinks(t *testing.T) {
	d := doctext.Read(t)
	pages := map[string]map[string]bool{}
	for _, f := range d.Files {
		pages[f.Path] = anchors(f)
	}
	n := 0
	for _, f := range d.Files {
		for _, l := range links(f) {
			if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(l.url) {
				continue // http:, https:, mailto:
			}
			n++
			target, frag, _ := strings.Cut(l.url, "#")
			if target == "" {
				target = l.page
			} else {
				target = path.Clean(path.Join(path.Dir(l.page), target))
			}
			if strings.HasPrefix(target, "../") {
				t.Errorf("%s:%d: %s leads outside the checkout", l.page, l.line, l.url)
				continue
			}
			if _, err := os.Stat(filepath.Join(d.Root, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s:%d: %s: %v", l.page, l.line, l.url, err)
				continue
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			as, ok := pages[target]
			if !ok {
				data, err := os.ReadFile(filepath.Join(d.Root, filepath.FromSlash(target)))
				if err != nil {
					t.Fatal(err)
				}
				as = anchors(doctext.File{Path: target, Text: string(data)})
				pages[target] = as
			}
			if !as[frag] {
				t.Errorf("%s:%d: %s: %s has no heading whose anchor is #%s", l.page, l.line, l.url, target, frag)
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d relative links in the documentation; the parser misses some", n)
	}
}

// TestReferenceIndexed checks that the README links every page of docs/,
// so that a new page is found.
func TestReferenceIndexed(t *testing.T) {
	d := doctext.Read(t)
	readme, _ := d.File("README.md")
	linked := map[string]bool{}
	for _, l := range links(readme) {
		target, _, _ := strings.Cut(l.url, "#")
		linked[path.Clean(target)] = true
	}
	for _, f := range d.Files[1:] {
		if !linked[f.Path] {
			t.Errorf("README.md does not link %s: add it under Reference", f.Path)
		}
	}
}

var (
	// doctextComment is the line after a block that says who runs it.
	// After the tests, a note may follow a semicolon: "; toolc serve
	// ./examples/weather" tells TestDocsTranscripts what to serve.
	doctextComment = regexp.MustCompile(`^<!-- doctext: (tested by (Test\w+(?:, Test\w+)*)(?:; [^>]*)?|illustrative: \S.*) -->$`)
	// command finds toolc, go or curl run as a command: at the start of
	// a line or after ;, &, |, ( or $(, behind variable assignments.
	command = regexp.MustCompile(`(?:^|[;&|(]\s*)(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*(toolc|go|curl)(?:\s|$)`)
)

// commands returns the command lines of a block that runs toolc, go or
// curl: in a shell block every line but comments, in a block of another
// kind (console, or none) the lines after a "$ " prompt.
func commands(b doctext.Block) []string {
	var cmds []string
	shell := b.Lang == "sh" || b.Lang == "bash" || b.Lang == "shell"
	if !shell && b.Lang != "" && b.Lang != "console" {
		return nil
	}
	lines := strings.Split(b.Text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			line = cmd
		} else if !shell {
			continue
		}
		// A command goes on after a backslash or a pipe at the end of
		// its line ("printf ... |" then "toolc serve --stdio"), and
		// inside a quoted argument that a line break splits.
		for (strings.HasSuffix(line, "\\") || strings.HasSuffix(line, "|") || strings.Count(line, "'")%2 == 1) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		if command.MatchString(line) {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// TestShellBlocksCovered checks that every code block of README.md and
// docs/*.md that prints a toolc, go or curl command says, on the line
// after it, which tests run it as printed (<!-- doctext: tested by
// TestX, TestY -->), each a test that reads the documentation through
// this package, or why no test does (<!-- doctext: illustrative: REASON
// -->). It lists every block that says neither.
func TestShellBlocksCovered(t *testing.T) {
	d := doctext.Read(t)
	tests := testsReadingDocs(t, d.Root)
	var uncovered []string
	counts := map[string]int{}
	for _, f := range d.Files {
		for _, b := range doctext.Blocks(f.Path, f.Text) {
			cmds := commands(b)
			if len(cmds) == 0 {
				continue
			}
			m := doctextComment.FindStringSubmatch(b.After)
			if m == nil {
				uncovered = append(uncovered, fmt.Sprintf("%s:%d: %s", b.Path, b.Line, cmds[0]))
				continue
			}
			if m[2] == "" {
				counts["illustrative"]++
				continue
			}
			counts["tested"]++
			for _, name := range strings.Split(m[2], ", ") {
				switch file, ok := tests[name]; {
				case !ok:
					t.Errorf("%s:%d: the block says it is tested by %s, and no _test.go file of the module has func %s", b.Path, b.Line, name, name)
				case file == "":
					t.Errorf("%s:%d: the block says it is tested by %s, whose file does not read the documentation with package doctext", b.Path, b.Line, name)
				}
			}
		}
	}
	if len(uncovered) > 0 {
		t.Errorf("%d code blocks print toolc, go or curl commands and say neither which test runs them nor why none does;\n"+
			"add <!-- doctext: tested by TestX --> or <!-- doctext: illustrative: REASON --> on the line after each:\n\t%s",
			len(uncovered), strings.Join(uncovered, "\n\t"))
	}
	t.Logf("command blocks: %d tested, %d illustrative", counts["tested"], counts["illustrative"])
}

// testsReadingDocs maps the name of every test function of the module to
// its file, or to "" when no test file of its package's directory uses
// package doctext.
func testsReadingDocs(t *testing.T, root string) map[string]string {
	t.Helper()
	tests := map[string]string{}
	reads := map[string]bool{} // directories with a test file that imports doctext
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && p != root && (strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" || e.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), `"github.com/toolc/toolc/internal/doctext"`) {
			reads[filepath.Dir(p)] = true
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			tests[m[1]] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range tests {
		if rel, _ := filepath.Rel(root, p); reads[filepath.Dir(p)] {
			tests[name] = rel
		} else {
			tests[name] = ""
		}
	}
	return tests
}

// TestREADMEStaysShort keeps README.md the newcomer's page: its sections
// are the set-up, the tour, why toolc and the links, and a new reference
// section goes on a page of docs/ (the comment at the top of the README
// says so to whoever merges one in).
func TestREADMEStaysShort(t *testing.T) {
	d := doctext.Read(t)
	readme, _ := d.File("README.md")
	want := []string{"toolc", "Contents", "Set-up: two commands", "A five-minute tour", "Why toolc", "Reference"}
	var got []string
	for _, h := range doctext.Headings(readme) {
		got = append(got, h.Title)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("README.md has the headings %q, want %q: move a reference section to its page of docs/ "+
			"(docs/serving.md, docs/contract.md, ...), and link a new page under Reference", got, want)
	}
	if n := strings.Count(readme.Text, "\n"); n > 200 {
		t.Errorf("README.md is %d lines; keep it under 200, with the reference in docs/", n)
	}
}
