package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/gogen"
	"github.com/toolc/toolc/validate"
)

// TestREADMERecords compiles the record that the README's Records section
// shows, as the request of a tool edit_file, and holds the section to what
// toolc does with it: no diagnostic, the runtime's message for an item
// that lacks a required field, and the Go names of toolc gen go.
func TestREADMERecords(t *testing.T) {
	readme := readFile(t, "../../README.md")
	_, section, ok := strings.Cut(readme, "\n### Records: arrays of flat objects\n")
	section, _, _ = strings.Cut(section, "\n### ")
	_, block, ok2 := strings.Cut(section, "```cue\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no Records section with a cue block")
	}
	dir := t.TempDir()
	contract := "package edit\n\nimport \"github.com/toolc/toolc/schema\"\n\nschema.#Service & {\n" +
		"name: \"edit\", version: \"1.0.0\", description: \"Edits files\"\n" +
		"tools: edit_file: {description: \"Edit a file\", request: fields: {\n" + block + "}}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "edit.cue"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("the README's record draws %s: %s [%s]", d.Pos, d.Message, d.Rule)
	}
	if res.HasErrors() {
		return
	}
	tool := res.Catalog.Services[0].Tools[0]
	v, err := validate.NewValidator(&tool.Request)
	if err != nil {
		t.Fatal(err)
	}
	out, err := v.Validate([]byte(`{"edits":[{"oldText":"a","newText":"b"}]}`))
	if err != nil || string(out) != `{"edits":[{"oldText":"a","newText":"b","count":1}]}` {
		t.Errorf("a good call gives %s, %v; want count's default filled in", out, err)
	}
	_, err = v.Validate([]byte(`{"edits":[{"oldText":"a","newText":"b"},{"oldText":"c"}]}`))
	if err == nil || !strings.Contains(section, "  ```\n  "+err.Error()+"\n  ```") {
		t.Errorf("the README does not quote the runtime's message for an item without newText, %v", err)
	}
	src, err := gogen.Generate(res.Catalog.Services[0], "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ code, readme string }{
		{"Edits []EditFileEditsItem `", "`Edits []EditFileEditsItem`"},
		{"\tCount int `", "`Count` is an `int`"},
	} {
		if !strings.Contains(string(src), c.code) || !strings.Contains(section, c.readme) {
			t.Errorf("the generated code lacks %q, or the README %q", c.code, c.readme)
		}
	}
}
