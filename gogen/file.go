package gogen

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"slices"
	"strings"
)

// goIdent is an identifier of another package; P writes it qualified and
// records the import.
type goIdent struct {
	importPath, name string
}

var (
	contextContext  = goIdent{"context", "Context"}
	fmtErrorf       = goIdent{"fmt", "Errorf"}
	jsonMarshal     = goIdent{"encoding/json", "Marshal"}
	jsonRawMessage  = goIdent{"encoding/json", "RawMessage"}
	pluginsHandler  = goIdent{pluginsPath, "Handler"}
	pluginsHandle   = goIdent{pluginsPath, "Handle"}
	pluginsResult   = goIdent{pluginsPath, "Result"}
	pluginsJSON     = goIdent{pluginsPath, "JSON"}
	rpcServe        = goIdent{rpcPath, "Serve"}
	pluginsPath     = "github.com/toolc/toolc/plugins"
	rpcPath         = "github.com/toolc/toolc/plugins/rpc"
	commentMaxWidth = 80 // columns, with a tab as 4
)

// generatedFile is one Go source file being written: P appends a line, and
// Content adds the package clause and the imports and formats the result.
type generatedFile struct {
	header  []string // comment lines above the package clause
	pkg     string
	imports map[string]bool
	body    bytes.Buffer
}

func newGeneratedFile(pkg string, header ...string) *generatedFile {
	return &generatedFile{header: header, pkg: pkg, imports: map[string]bool{}}
}

// P writes one line: its arguments one after another, with a goIdent
// qualified by its package's name.
func (g *generatedFile) P(args ...any) {
	for _, a := range args {
		switch a := a.(type) {
		case goIdent:
			g.imports[a.importPath] = true
			fmt.Fprintf(&g.body, "%s.%s", path.Base(a.importPath), a.name)
		default:
			fmt.Fprint(&g.body, a)
		}
	}
	g.body.WriteByte('\n')
}

// Comment writes text as a // comment indented by indent tabs, one line
// per line of text, with long lines wrapped at word boundaries. An empty
// line of text is an empty comment line, which starts a paragraph.
func (g *generatedFile) Comment(indent int, text string) {
	prefix := strings.Repeat("\t", indent) + "//"
	for _, l := range commentText(indent, text) {
		if l == "" {
			g.P(prefix)
		} else {
			g.P(prefix, " ", l)
		}
	}
}

// commentLines returns how many lines Comment writes for text.
func commentLines(indent int, text string) int {
	return len(commentText(indent, text))
}

func commentText(indent int, text string) []string {
	width := commentMaxWidth - 4*indent - len("// ")
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			out = append(out, "")
			continue
		}
		out = append(out, wrap(line, width)...)
	}
	return out
}

// wrap breaks text into lines of at most width characters where it can;
// a longer word gets a line of its own.
func wrap(text string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = w
		case len(cur)+1+len(w) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	return append(lines, cur)
}

// Content returns the file's source, gofmt-formatted.
func (g *generatedFile) Content() ([]byte, error) {
	var b bytes.Buffer
	for _, h := range g.header {
		fmt.Fprintf(&b, "// %s\n", h)
	}
	fmt.Fprintf(&b, "\npackage %s\n\n", g.pkg)
	paths := make([]string, 0, len(g.imports))
	for p := range g.imports {
		paths = append(paths, p)
	}
	// Standard library first, as goimports groups them.
	slices.SortFunc(paths, func(a, b string) int {
		if std(a) != std(b) {
			if std(a) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(paths) > 0 {
		b.WriteString("import (\n")
		for i, p := range paths {
			if i > 0 && std(p) != std(paths[i-1]) {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "\t%q\n", p)
		}
		b.WriteString(")\n\n")
	}
	b.Write(g.body.Bytes())
	src, err := format.Source(b.Bytes())
	if err != nil {
		// A bug in the generator, not in the contract: show the source.
		return nil, fmt.Errorf("gogen: generated code does not parse: %v\n%s", err, b.Bytes())
	}
	return src, nil
}

// std reports whether an import path is in the standard library.
func std(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}
