package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/gogen"
	"github.com/toolc/toolc/validate"
)

// TestREADMERecords compiles the record that the README's Records section
// shows, as the request of a tool edit_file, and holds the section to what
// toolc does with it: no diagnostic, the runtime's message for an item
// that lacks a required field, and the Go names of toolc gen go.
func TestREADMERecords(t *testing.T) {
	section := docs(t).MustSection(t, "Records: arrays of flat objects")
	_, block, ok2 := strings.Cut(section, "```cue\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok2 || !ok3 {
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

// TestREADMEJSON compiles the free-form fields that the README's section
// shows, as the request of a tool find, and holds the section to what
// toolc does with them: a free-form warning on each and nothing else, the
// strict projection it quotes, the value the handler sees for a string
// that holds it, and the Go type.
func TestREADMEJSON(t *testing.T) {
	section := docs(t).MustSection(t, "Free-form values: `type: \"json\"`")
	_, block, ok2 := strings.Cut(section, "```cue\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok2 || !ok3 {
		t.Fatal("README.md has no free-form section with a cue block")
	}
	dir := t.TempDir()
	contract := "package db\n\nimport \"github.com/toolc/toolc/schema\"\n\nschema.#Service & {\n" +
		"name: \"db\", version: \"1.0.0\", description: \"Documents\"\n" +
		"tools: find: {description: \"Find documents\", request: fields: {\n" + block + "}}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "db.cue"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for _, d := range res.Diagnostics {
		if d.Rule == "free-form" {
			warnings++
			continue
		}
		t.Errorf("the README's free-form fields draw %s: %s [%s]", d.Pos, d.Message, d.Rule)
	}
	if warnings != 2 {
		t.Errorf("%d free-form warnings, want one on each field", warnings)
	}
	if res.HasErrors() {
		return
	}
	strict, err := res.Catalog.ProjectJSON(catalog.OpenAIChat, catalog.ProjectOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	_, quoted, _ := strings.Cut(section, "  ```\n  \"filter\": ")
	quoted, _, _ = strings.Cut(quoted, "\n")
	var want, got any
	if err := json.Unmarshal([]byte(quoted), &want); err != nil {
		t.Fatalf("the README's strict projection of filter does not parse: %v", err)
	}
	var elems []struct {
		Function struct {
			Parameters struct {
				Properties map[string]any `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(strict, &elems); err != nil {
		t.Fatal(err)
	}
	got = elems[0].Function.Parameters.Properties["filter"]
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OpenAI's strict projection of filter is %v; the README says %v", got, want)
	}
	v, err := validate.NewValidator(&res.Catalog.Services[0].Tools[0].Request)
	if err != nil {
		t.Fatal(err)
	}
	out, err := v.Validate([]byte(`{"filter":"{\"age\": {\"$gt\": 30}}"}`))
	if err != nil || !strings.Contains(section, "`"+`{"filter":"{\"age\": {\"$gt\": 30}}"}`+"` reaches it as `"+string(out)+"`") {
		t.Errorf("the README does not say what the handler sees for filter as a string: %s, %v", out, err)
	}
	src, err := gogen.Generate(res.Catalog.Services[0], "main")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "\tFilter json.RawMessage `") || !strings.Contains(section, "`json.RawMessage`") {
		t.Errorf("the generated code or the README lacks json.RawMessage")
	}
}
