// Package scaffold writes a new toolc project: a CUE module that `cue vet`
// checks offline, one service contract, its handler's main package, a test
// of the handler, and the handler's generated code, and says what to run
// next.
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"golang.org/x/mod/modfile"

	"github.com/toolc/toolc/internal/atomicfile"
	"github.com/toolc/toolc/internal/inputfile"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/gogen"
	"github.com/toolc/toolc/schema"
)

// cueLanguage is the CUE language version that new modules declare.
const cueLanguage = "v0.17.0"

// Result is what Init wrote and what to run next.
type Result struct {
	// Files are the files written, relative to the project directory.
	Files []string
	// Next are the commands that take the new project to a running
	// server, to be run one after another from the directory where Init
	// ran, exactly as they stand.
	Next []Step
}

// Step is one command of Result.Next.
type Step struct {
	Command string // a shell command line
	Comment string // why, or what it does; may be empty
}

// NextText is Next as lines to show a user: each command on a line of its
// own after a tab, with its comment aligned after it.
func (r *Result) NextText() string {
	width := 0
	for _, s := range r.Next {
		width = max(width, len(s.Command))
	}
	var b strings.Builder
	for _, s := range r.Next {
		if s.Comment == "" {
			fmt.Fprintf(&b, "\t%s\n", s.Command)
		} else {
			fmt.Fprintf(&b, "\t%-*s  # %s\n", width, s.Command, s.Comment)
		}
	}
	return b.String()
}

// Init writes a new project into dir, which may exist but must not hold
// any of the files that Init writes, with its handler getting the SDK from
// sdk (see FindSDK). Each file is written to a temporary name and renamed,
// and every file's content is made before the first is written, so an
// interrupted or failed Init leaves no half-written file.
func Init(dir string, sdk SDK) (*Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	}
	p := newParams(filepath.Base(abs), sdk)
	files := []file{
		{name: "cue.mod/module.cue", tmpl: moduleTmpl},
		{name: filepath.ToSlash(filepath.Join("cue.mod/pkg", schema.ImportPath, schema.FileName)), data: []byte(schema.Source())},
		{name: p.Package + ".cue", tmpl: contractTmpl},
		{name: "main.go", tmpl: handlerTmpl},
		{name: "main_test.go", tmpl: handlerTestTmpl},
	}
	enclosing := enclosingModule(abs)
	if enclosing == "" {
		files = append(files, file{name: "go.mod", tmpl: goModTmpl})
	}
	// The generated files come last: generate fills them in.
	files = append(files, file{name: gogen.FileName}, file{name: gogen.TestFileName})
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
	for i := range files {
		if files[i].tmpl != "" {
			if files[i].data, err = render(files[i], p); err != nil {
				return nil, err
			}
		}
	}
	gen, test := &files[len(files)-2], &files[len(files)-1]
	if gen.data, test.data, err = generate(files); err != nil {
		return nil, err
	}
	res := &Result{}
	for _, f := range files {
		if err := writeFileAtomic(filepath.Join(abs, f.name), f.data); err != nil {
			return res, err
		}
		res.Files = append(res.Files, f.name)
	}
	res.Next = nextSteps(dir, sdk, enclosing)
	return res, nil
}

// generate returns what toolc gen go writes for the new contract, the
// handler's generated code and its test file, so that toolc gen go
// --check passes on a new project. The contract compiles in a temporary
// copy of the CUE files, since none is written yet.
func generate(files []file) (gen, test []byte, err error) {
	tmp, err := os.MkdirTemp("", "toolc-init-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if strings.HasSuffix(f.name, ".cue") {
			if err := writeFileAtomic(filepath.Join(tmp, f.name), f.data); err != nil {
				return nil, nil, err
			}
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: tmp}, ".")
	if err != nil {
		return nil, nil, err
	}
	if res.HasErrors() || len(res.Catalog.Services) != 1 {
		// The contract is fixed text; a failure here is toolc's bug.
		return nil, nil, fmt.Errorf("the new contract does not compile (a bug in toolc init): %v", res.Diagnostics)
	}
	svc := res.Catalog.Services[0]
	if gen, err = gogen.Generate(svc, "main"); err != nil {
		return nil, nil, err
	}
	if test, err = gogen.GenerateTest(svc, "main"); err != nil {
		return nil, nil, err
	}
	return gen, test, nil
}

// nextSteps are the commands from the directory where init ran to a
// running server.
func nextSteps(dir string, sdk SDK, enclosing string) []Step {
	var steps []Step
	if _, err := exec.LookPath("toolc"); err != nil && sdk.Dir != "" {
		steps = append(steps, Step{"go -C " + shellQuote(sdk.Dir) + " install ./cmd/toolc",
			"toolc is not on PATH: this installs it into $(go env GOPATH)/bin, which must be on PATH"})
	}
	steps = append(steps, Step{"cd " + shellQuote(dir), ""})
	switch {
	case enclosing == ModulePath:
		// A project inside the toolc checkout uses the SDK beside it.
	case enclosing != "":
		if sdk.Dir != "" {
			steps = append(steps, Step{"go mod edit -replace " + ModulePath + "=" + shellQuote(sdk.Dir), "use the toolc checkout at " + sdk.Dir})
		} else {
			steps = append(steps, Step{"go get " + ModulePath + "@" + sdk.Version, "the handler SDK, at the version of this toolc"})
		}
		steps = append(steps, Step{"go mod tidy", ""})
	case sdk.Dir != "":
		steps = append(steps, Step{"go mod tidy", "fetches what the handler SDK needs; the SDK is the checkout " + sdk.Dir})
	default:
		steps = append(steps, Step{"go mod tidy", "fetches the handler SDK, " + ModulePath + " " + sdk.Version})
	}
	return append(steps,
		Step{"toolc check ./...", ""},
		Step{"toolc dev ./...", "serves MCP on http://127.0.0.1:8931/mcp and reloads as you edit"})
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type file struct {
	name string
	tmpl string // a text/template, or empty
	data []byte // the content
}

type params struct {
	Service     string // service name: lower-case words joined by hyphens
	Package     string // CUE package name
	Module      string // CUE module path
	GoModule    string
	CUELanguage string
	GoVersion   string
	SDK         SDK
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

func newParams(base string, sdk SDK) params {
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
		GoVersion:   GoVersion,
		SDK:         sdk,
	}
}

func render(f file, p params) ([]byte, error) {
	t, err := template.New(f.name).Funcs(template.FuncMap{"quote": modfile.AutoQuote}).Parse(f.tmpl)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// enclosingModule returns the module path of the go.mod in dir or above
// it, or "" when dir is not inside a Go module.
func enclosingModule(dir string) string {
	for {
		// Read as toolc reads its input: a FIFO or a link to /dev/zero
		// named go.mod above the directory must not block or fill memory.
		if data, err := inputfile.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if path := modfile.ModulePath(data); path != "" {
				return path
			}
			return "(unnamed)"
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
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

go {{.GoVersion}}

require github.com/toolc/toolc {{.SDK.Version}}
{{- if .SDK.Dir}}

// The handler SDK is the toolc checkout here, not a published version.
replace github.com/toolc/toolc => {{quote .SDK.Dir}}
{{- end}}
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

const handlerTestTmpl = `package main

import (
	"errors"
	"testing"

	"github.com/toolc/toolc/toolctest"
)

// TestEcho calls echo as a model would: newTestClient (in tools_gen_test.go,
// which toolc gen go writes) serves the handler with the compiled contract,
// which checks each call's arguments and fills in repeat's default before
// the handler runs, and holds its response to the contract. No CUE, no
// toolc and no plugin process are needed to run it: go test ./...
func TestEcho(t *testing.T) {
	c := newTestClient(t, handler{})
	for _, tc := range []struct {
		args any // what the model sends: a map of the arguments, or JSON text
		want string
	}{
		{map[string]any{"message": "hi"}, "hi"}, // repeat defaults to 1
		{` + "`" + `{"message": "hi", "repeat": 3}` + "`" + `, "hi hi hi"},
	} {
		resp, err := c.Echo(t.Context(), tc.args)
		if err != nil {
			t.Fatalf("echo %v: %v", tc.args, err)
		}
		if resp.Text != tc.want {
			t.Errorf("echo %v = %q, want %q", tc.args, resp.Text, tc.want)
		}
	}

	// The contract refuses these before the handler runs; the model reads
	// the tool error's message and can correct its call.
	for _, args := range []any{
		map[string]any{"message": ""},
		map[string]any{"message": "hi", "repeat": 11},
		map[string]any{"text": "hi"},
	} {
		_, err := c.Echo(t.Context(), args)
		var toolErr *toolctest.ToolError
		if !errors.As(err, &toolErr) {
			t.Errorf("echo %v = %v, want a tool error", args, err)
		}
	}
}
`

const handlerTmpl = `// Command {{.Package}} is the handler plugin of the {{.Service}} service,
// whose contract is {{.Package}}.cue beside this file. toolc builds it and runs
// it as a plugin process: toolc dev ./... serves it and reloads it as you
// edit, and the runtime validates every call against the contract before
// it reaches a handler here.
package main

// tools_gen.go holds the Go side of the contract: the Tools interface, the
// request and response types, and Serve. Run go generate (or toolc gen go
// ./...) after you edit the contract, then implement the new methods.
{{/* The action keeps go generate in this repository from taking the
line below for one of its own. */ -}}
{{"//go:generate"}} toolc gen go .

import (
	"context"
	"strings"
)

func main() {
	Serve(handler{})
}

// handler implements Tools, one method per tool of the contract.
type handler struct{}

// Echo handles the echo tool. The runtime has checked the arguments
// against the contract and filled in repeat's default, 1, before it runs.
func (handler) Echo(ctx context.Context, req EchoRequest) (*EchoResponse, error) {
	words := make([]string, req.Repeat)
	for i := range words {
		words[i] = req.Message
	}
	return &EchoResponse{Text: strings.Join(words, " ")}, nil
}
`
