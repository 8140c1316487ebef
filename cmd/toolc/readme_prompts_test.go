package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/compiler"
)

// TestREADMEPrompts compiles the service that the README's Prompts and
// resources section shows, with the files it names beside it, and holds
// it to no diagnostic: the example works as printed.
func TestREADMEPrompts(t *testing.T) {
	section := docs(t).MustSection(t, "Prompts and resources")
	_, block, ok2 := strings.Cut(section, "```cue\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok2 || !ok3 {
		t.Fatal("README.md has no Prompts and resources section with a cue block")
	}
	block = strings.Replace(block, "\t// ...\n", "\tversion: \"1.0.0\"\n\tdescription: \"Documentation\"\n", 1)
	dir := t.TempDir()
	files := map[string]string{
		"docs.cue":      "package docs\n\nimport \"github.com/toolc/toolc/schema\"\n\n" + block,
		"style.md":      "# Style\n",
		"checklist.png": "\x89PNG\r\n\x1a\n",
		"CHANGELOG.md":  "# Changes\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("the README's example draws %s: %s [%s]", d.Pos, d.Message, d.Rule)
	}
	if s := res.Catalog.Services; len(s) != 1 || len(s[0].Prompts) != 1 || len(s[0].Resources) != 2 {
		t.Errorf("the README's example compiles to %d services, not one with a prompt and two resources", len(s))
	}
}

// TestREADMESkills compiles the service that docs/contract.md's Skills
// section shows, with the skill directories it names, and holds it to no
// diagnostic.
func TestREADMESkills(t *testing.T) {
	section := docs(t).MustSection(t, "Skills")
	_, block, ok2 := strings.Cut(section, "```cue\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok2 || !ok3 {
		t.Fatal("the docs have no Skills section with a cue block")
	}
	block = strings.Replace(block, "\t// ...\n", "\tversion: \"1.0.0\"\n\tdescription: \"Documentation\"\n", 1)
	dir := t.TempDir()
	files := map[string]string{
		"docs.cue":                       "package docs\n\nimport \"github.com/toolc/toolc/schema\"\n\n" + block,
		"skills/pdf-processing/SKILL.md": "---\nname: pdf-processing\ndescription: Fill PDF forms\n---\n# PDF\n",
		"skills/pdf-processing/FORMS.md": "# Forms\n",
		"guides/release/SKILL.md":        "---\nname: release-notes\ndescription: Write release notes\n---\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("the docs' example draws %s: %s [%s]", d.Pos, d.Message, d.Rule)
	}
	if s := res.Catalog.Services; len(s) != 1 || len(s[0].Skills) != 2 {
		t.Errorf("the docs' example compiles to %d services, not one with two skills", len(s))
	}
}
