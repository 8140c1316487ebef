// Package scaffold writes a new toolc project: a CUE module that `cue vet`
// checks offline, one service contract and its handler's main package.
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"text/template"

	"github.com/toolc/toolc/internal/atomicfile"

	"github.com/toolc/toolc/schema"
)

// cueLanguage is the CUE language version that new modules declare.
const cueLanguage = "v0.17.0"

// Init writes a new project into dir, which may exist but must not hold
// any of the files that Init writes. It returns the files it wrote,
// relative to dir. Each file is written to a temporary name and renamed, so
// an interrupted Init leaves no half-written file.
func Init(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	}
	p := newParams(filepath.Base(abs))
	files := []file{
		{"cue.mod/module.cue", moduleTmpl},
		{filepath.ToSlash(filepath.Join("cue.mod/pkg", schema.ImportPath, schema.FileName)), schema.Source()},
		{p.Package + ".cue", contractTmpl},
		{"main.go", handlerTmpl},
	}
	if !insideGoModule(abs) {
		files = append(files, file{"go.mod", goModTmpl})
	}
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(abs, f.name)); err == nil {
			exist = append(exist, f.name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if len(exist) > 0 {
		return nil, fmt.Errorf("%s already holds %s; not overwriting", dir, strings.Join(exist, ", "))
	}
	var written []string
	for _, f := range files {
		data, err := render(f, p)
		if err != nil {
			return written, err
		}
		if err := writeFileAtomic(filepath.Join(abs, f.name), data); err != nil {
			return written, err
		}
		written = append(written, f.name)
	}
	return written, nil
}

type file struct {
	name string
	tmpl string
}

type params struct {
	Service     string // service name: lower-case words joined by hyphens
	Package     string // CUE package name
	Module      string // CUE module path
	GoModule    string
	CUELanguage string
	// ToolcVersion is the version of the toolc module the handler needs:
	// the running binary's, or v0.0.0 for a development build, which a
	// replace directive must then point at a checkout.
	ToolcVersion string
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

func newParams(base string) params {
	words := strings.Trim(nonWord.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if words == "" || words[0] < 'a' || words[0] > 'z' {
		words = "tools-" + words
		words = strings.TrimSuffix(words, "-")
	}
	if len(words) > 64 {
		words = strings.TrimRight(words[:64], "-")
	}
	pkg := strings.ReplaceAll(words, "-", "_")
	return params{
		Service:     words,
		Package:     pkg,
		Module:      "example.com/" + words + "@v0",
		GoModule:    "example.com/" + words,
		CUELanguage: cueLanguage,

		ToolcVersion: toolcVersion(),
	}
}

func render(f file, p params) ([]byte, error) {
	if f.tmpl == schema.Source() {
		return []byte(f.tmpl), nil // copied as it is, not a template
	}
	t, err := template.New(f.name).Parse(f.tmpl)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func insideGoModule(dir string) bool {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it into place.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(name, data)
}

const moduleTmpl = `module: "{{.Module}}"
language: {
	version: "{{.CUELanguage}}"
}
`

const goModTmpl = `module {{.GoModule}}

go 1.25

require github.com/toolc/toolc {{.ToolcVersion}}
`

const contractTmpl = `package {{.Package}}

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "{{.Service}}"
	version:     "0.1.0"
	description: "Say what this service's tools are for"

	tools: echo: {
		description: "Echo a message back, to check that the tools are wired up"
		annotations: {readOnly: true, idempotent: true}
		request: {
			description: "The message to echo"
			fields: {
				message: {type: "string", description: "Text to send back", minLength: 1, maxLength: 1000}
				repeat: {type: "integer", description: "How many times to repeat the message", required: false, default: 1, minimum: 1, maximum: 10}
			}
		}
		response: fields: {
			text: {type: "string", description: "The echoed text"}
		}
		examples: [{message: "hello"}, {message: "hi", repeat: 2}]
	}
}
`

const handlerTmpl = `// Command {{.Package}} is the handler plugin of the {{.Service}} service,
// whose contract is {{.Package}}.cue beside this file. toolc builds it and runs
// it as a plugin process: toolc dev ./... serves it and reloads it as you
// edit, and the runtime validates every call against the contract before
// it reaches a handler here.
package main

import (
	"context"
	"strings"

	"github.com/toolc/toolc/plugins"
)

// echoRequest holds the arguments of the echo tool; the json tags are the
// contract's field names. repeat is optional in the contract, and the
// runtime fills in its default, 1, before the handler runs.
type echoRequest struct {
	Message string ` + "`json:\"message\"`" + `
	Repeat  int    ` + "`json:\"repeat\"`" + `
}

// echoResponse matches the contract's response fields.
type echoResponse struct {
	Text string ` + "`json:\"text\"`" + `
}

func main() {
	plugins.Serve(
		plugins.Handle("echo", func(ctx context.Context, req echoRequest) (*plugins.Result, error) {
			words := make([]string, req.Repeat)
			for i := range words {
				words[i] = req.Message
			}
			return plugins.JSON(echoResponse{Text: strings.Join(words, " ")})
		}),
	)
}
`

// toolcVersion is the version of the toolc module this binary was built
// from, or v0.0.0 when it was built from a checkout.
func toolcVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(info.Main.Version, "v") {
		return info.Main.Version
	}
	return "v0.0.0"
}
