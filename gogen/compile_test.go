package gogen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/gogen"
)

// edgeContract has the shapes the generator must get right: Go keywords
// as field names, optional fields with and without defaults, integer and
// string enums (one shared by the request and the response, one not),
// required and optional arrays in a response, a tool without fields, one
// without a response and one with an empty response; and records: a named
// struct per record type, with enums and defaults of their own, one
// shared by the request and the response, and a response's with a
// required array in its items.
const edgeContract = `package edge

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "edge-cases"
	version:     "0.1.0"
	description: "Names and shapes that the Go generator must get right"

	tools: get_url: {
		description: "Describe a URL"
		request: fields: {
			url: {type: "string", description: "The URL", format: "uri"}
			type: {type: "string", description: "A keyword, and an enum with an empty value", enum: ["text/html", "application/json", ""], required: false}
			range: {type: "integer", description: "A keyword, and an integer enum", enum: [-1, 0, 1], required: false, default: 0}
			func: {type: "boolean", description: "A keyword, optional", required: false}
			map: {type: "array", items: "number", description: "A keyword, an array with a default", required: false, default: [1.5]}
			state: {type: "string", description: "An enum the response shares", enum: ["on", "off"], required: false, default: "on"}
			mode: {type: "string", description: "An enum the response does not share", enum: ["a", "b"]}
		}
		response: fields: {
			state: {type: "string", description: "The request's enum", enum: ["on", "off"]}
			mode: {type: "string", description: "Not the request's enum", enum: ["x", "y"]}
			ids: {type: "array", items: "string", description: "A required list"}
			chan: {type: "integer", description: "A keyword, optional", required: false}
			tags: {type: "array", items: "string", description: "An optional list", required: false}
		}
	}

	tools: ping: {
		description: "No fields and no response"
		request: fields: {}
	}

	tools: edit_file: {
		description: "Records"
		request: fields: {
			edits: {
				type: "array", description: "Edits to apply, in order", minItems: 1
				items: fields: {
					oldText: {type: "string", description: "Text to search for"}
					newText: {type: "string", description: "Text to replace it with"}
					count: {type: "integer", description: "How many", required: false, default: 1}
					mode: {type: "string", description: "How to match", required: false, enum: ["exact", "regex"]}
					lines: {type: "array", items: "integer", description: "Lines", required: false}
				}
			}
			notes: {
				type: "array", description: "Notes the response echoes", required: false
				items: fields: {
					text: {type: "string", description: "A note"}
					at: {type: "integer", description: "A line", required: false}
				}
			}
			meta: {type: "json", object: true, description: "Free-form metadata, echoed", required: false}
		}
		response: fields: {
			meta: {type: "json", description: "The request's metadata"}
			notes: {
				type: "array", description: "The notes"
				items: fields: {
					text: {type: "string", description: "A note"}
					at: {type: "integer", description: "A line", required: false}
				}
			}
			applied: {
				type: "array", description: "What was applied"
				items: fields: {
					path: {type: "string", description: "A path"}
					lines: {type: "array", items: "integer", description: "Lines changed"}
					size: {type: "integer", description: "Bytes", required: false}
				}
			}
		}
	}

	tools: touch: {
		description: "No fields and an empty response"
		deprecated:  true
		request: fields: {}
		response: fields: {}
	}
}
`

// edgeHandler implements the generated Tools; it compiles only if every
// generated name and type is the one expected.
const edgeHandler = `package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolc/toolc/plugins"
)

type edge struct{}

func (edge) GetURL(_ context.Context, req GetURLRequest) (*GetURLResponse, error) {
	var (
		_ string          = req.URL
		_ *GetURLType     = req.Type
		_ GetURLRange     = req.Range
		_ *bool           = req.Func
		_ []float64       = req.Map
		_ GetURLState     = req.State
		_ GetURLMode      = req.Mode
		_ []GetURLRange   = []GetURLRange{GetURLRangeMinus1, GetURLRange0, GetURLRange1}
		_ []GetURLType    = []GetURLType{GetURLTypeTextHTML, GetURLTypeApplicationJSON, GetURLTypeEmpty}
	)
	if req.URL == "fail" {
		return nil, errors.New("no such URL")
	}
	if req.URL == "nil" {
		return nil, nil
	}
	resp := &GetURLResponse{State: req.State, Mode: GetURLResponseModeX}
	if req.Func != nil {
		resp.Chan = new(7)
		resp.Tags = []string{}
	}
	return resp, nil
}

func (edge) EditFile(_ context.Context, req EditFileRequest) (*EditFileResponse, error) {
	var (
		_ []EditFileEditsItem = req.Edits
		_ []EditFileNotesItem = req.Notes
	)
	e := req.Edits[0]
	var (
		_ string              = e.OldText
		_ int                 = e.Count
		_ *EditFileEditsMode  = e.Mode
		_ []EditFileEditsMode = []EditFileEditsMode{EditFileEditsModeExact, EditFileEditsModeRegex}
		_ []int               = e.Lines
	)
	var _ json.RawMessage = req.Meta
	return &EditFileResponse{Meta: req.Meta, Notes: req.Notes, Applied: []EditFileAppliedItem{{Path: e.OldText, Size: new(e.Count)}}}, nil
}

func (edge) Ping(context.Context, PingRequest) (*plugins.Result, error) {
	return plugins.Text("pong"), nil
}

func (edge) Touch(context.Context, TouchRequest) (*TouchResponse, error) {
	return &TouchResponse{}, nil
}

func main() {
	Serve(edge{})
}
`

// edgeTest runs the handlers the way the runtime does, after validation.
const edgeTest = `package main

import (
	"context"
	"encoding/json"
	"testing"
)

func TestHandlers(t *testing.T) {
	hs := Handlers(edge{})
	byName := map[string]int{}
	for i, h := range hs {
		byName[h.Tool()] = i
	}
	call := func(tool, args string) (string, bool) {
		t.Helper()
		res, err := hs[byName[tool]].Call(context.Background(), json.RawMessage(args))
		if err != nil {
			return err.Error(), true
		}
		if res.IsError {
			return res.Content[0].Text, true
		}
		if res.StructuredContent == nil {
			return res.Content[0].Text, false
		}
		return string(res.StructuredContent.(json.RawMessage)), false
	}
	for _, tc := range []struct{ tool, args, want string; isError bool }{
		{"get_url", ` + "`" + `{"url":"u","state":"off","mode":"a"}` + "`" + `, ` + "`" + `{"state":"off","mode":"x","ids":[]}` + "`" + `, false},
		{"get_url", ` + "`" + `{"url":"u","func":true,"mode":"a"}` + "`" + `, ` + "`" + `{"state":"","mode":"x","ids":[],"chan":7,"tags":[]}` + "`" + `, false},
		{"get_url", ` + "`" + `{"url":"fail"}` + "`" + `, "no such URL", true},
		{"get_url", ` + "`" + `{"url":"nil"}` + "`" + `, "the handler of get_url returned no response and no error", true},
		{"ping", "{}", "pong", false},
		{"edit_file", ` + "`" + `{"edits":[{"oldText":"a","newText":"b","count":1}],"notes":[{"text":"n"}],"meta":{"k":[1]}}` + "`" + `, ` + "`" + `{"meta":{"k":[1]},"notes":[{"text":"n"}],"applied":[{"path":"a","lines":[],"size":1}]}` + "`" + `, false},
		{"touch", "{}", "{}", false},
	} {
		got, isError := call(tc.tool, tc.args)
		if got != tc.want || isError != tc.isError {
			t.Errorf("%s %s = %s (error %v), want %s (error %v)", tc.tool, tc.args, got, isError, tc.want, tc.isError)
		}
	}
}
`

// edgeClientTest calls the tools through the generated test client, over
// the contract that tools_gen_test.go embeds: defaults applied, bad
// arguments refused, each kind of result typed.
const edgeClientTest = `package main

import (
	"errors"
	"testing"

	"github.com/toolc/toolc/toolctest"
)

func TestClient(t *testing.T) {
	c := newTestClient(t, edge{})
	resp, err := c.GetURL(t.Context(), map[string]any{"url": "https://example.com/", "mode": "b"})
	if err != nil || resp.State != GetURLStateOn || resp.Mode != GetURLResponseModeX || resp.IDs == nil {
		t.Errorf("get_url = %+v, %v; want state on, the default", resp, err)
	}
	for _, args := range []string{` + "`" + `{"url":"not a URI","mode":"a"}` + "`" + `, ` + "`" + `{"url":"https://example.com/"}` + "`" + `} {
		var toolErr *toolctest.ToolError
		if _, err := c.GetURL(t.Context(), args); !errors.As(err, &toolErr) {
			t.Errorf("get_url %s = %v, want a tool error", args, err)
		}
	}
	if res, err := c.Ping(t.Context(), nil); err != nil || res.Text != "pong" {
		t.Errorf("ping = %+v, %v", res, err)
	}
	if resp, err := c.Touch(t.Context(), "{}"); err != nil || resp == nil {
		t.Errorf("touch = %+v, %v", resp, err)
	}
	// A record through the client: the runtime fills in count's default
	// in the item, which the handler reports as the size.
	// A free-form object sent as a string that holds it, as a strict
	// projection sends it: the handler gets the object.
	edit, err := c.EditFile(t.Context(), map[string]any{"edits": []any{map[string]any{"oldText": "a", "newText": "b"}}, "meta": "{\"k\": [1]}"})
	if err != nil || len(edit.Applied) != 1 || edit.Applied[0].Size == nil || *edit.Applied[0].Size != 1 || edit.Applied[0].Lines == nil || string(edit.Meta) != ` + "`" + `{"k":[1]}` + "`" + ` {
		t.Errorf("edit_file = %+v, %v; want one applied item of size 1, the default count, and meta {\"k\":[1]}", edit, err)
	}
	tools, err := c.client.ListTools(t.Context())
	if err != nil || len(tools) != 4 {
		t.Errorf("ListTools = %d tools, %v", len(tools), err)
	}
}
`

// TestGeneratedCodeCompiles generates the edge contract's code and test
// file into a module of its own, next to a handler that implements it, and
// runs go vet and the handler's tests there against this checkout of
// toolc: one calls the handlers directly, one through the generated test
// client.
func TestGeneratedCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	contractDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(contractDir, "edge.cue"), []byte(edgeContract), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := compileDir(t, contractDir)
	src, err := gogen.Generate(svc, "main")
	if err != nil {
		t.Fatal(err)
	}
	testSrc, err := gogen.GenerateTest(svc, "main")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		gogen.FileName:     string(src),
		gogen.TestFileName: string(testSrc),
		"main.go":          edgeHandler,
		"main_test.go":     edgeTest,
		"client_test.go":   edgeClientTest,
		"go.mod":           "module example.com/edge\n\ngo 1.26\n\nrequire github.com/toolc/toolc v0.0.0\n\nreplace github.com/toolc/toolc => " + root + "\n",
		"go.sum":           string(sum),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"vet", "."}, {"test", "-count=1", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s\ngenerated code:\n%s", args[0], err, out, src)
		}
	}
}

// TestLibraryCodeHasNoServe generates the edge contract's code for a
// library package, implements it there, and runs it in process from a
// main package of the same module, as a service that embeds its catalog
// does: the code compiles without Serve, and the program's imports hold
// no package of the plugin protocol, which a Serve would bring (Go links
// an imported package whether its functions are called or not).
func TestLibraryCodeHasNoServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	contractDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(contractDir, "edge.cue"), []byte(edgeContract), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := gogen.Generate(compileDir(t, contractDir), "edge")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(src, []byte("func Serve(")) || bytes.Contains(src, []byte("plugins/rpc")) {
		t.Errorf("the code of a library package has a Serve, or imports the plugin protocol:\n%s", src)
	}
	lib, ok := strings.CutSuffix(strings.Replace(edgeHandler, "package main", "package edge", 1), "func main() {\n\tServe(edge{})\n}\n")
	if !ok {
		t.Fatal("edgeHandler no longer ends with its main")
	}
	lib += "// New returns the implementation.\nfunc New() Tools { return edge{} }\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		filepath.Join("edge", gogen.FileName): string(src),
		filepath.Join("edge", "edge.go"):      lib,
		"main.go": `package main

import (
	"example.com/edge/edge"
	"github.com/toolc/toolc/runtime"
)

func main() {
	_ = runtime.Local(edge.Handlers(edge.New())...)
}
`,
		"go.mod": "module example.com/edge\n\ngo 1.26\n\nrequire github.com/toolc/toolc v0.0.0\n\nreplace github.com/toolc/toolc => " + root + "\n",
		"go.sum": string(sum),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	vet := exec.Command("go", "vet", "./...")
	vet.Dir, vet.Env = dir, env
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet: %v\n%s\ngenerated code:\n%s", err, out, src)
	}
	list := exec.Command("go", "list", "-deps", ".")
	list.Dir, list.Env = dir, env
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/hashicorp/go-plugin") || strings.HasPrefix(dep, "google.golang.org/grpc") || strings.HasPrefix(dep, "github.com/toolc/toolc/plugins/rpc") {
			t.Errorf("a program that runs the library's Handlers in process links %s", dep)
		}
	}
}
