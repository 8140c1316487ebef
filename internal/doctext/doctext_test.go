package doctext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnchor(t *testing.T) {
	for _, c := range []struct{ title, want string }{
		{"Set-up: two commands", "set-up-two-commands"},
		{"OAuth: `--auth-issuer ISSUER --auth-resource RESOURCE`", "oauth---auth-issuer-issuer---auth-resource-resource"},
		{"Who is calling: `plugins.CallerOf`", "who-is-calling-pluginscallerof"},
		{"Free-form values: `type: \"json\"`", "free-form-values-type-json"},
		{"What a catalog costs: `--stats`", "what-a-catalog-costs---stats"},
		{"snake_case names", "snake_case-names"},
	} {
		if got := Anchor(c.title); got != c.want {
			t.Errorf("Anchor(%q) = %q, want %q", c.title, got, c.want)
		}
	}
}

// testDocs writes a README.md and docs pages into a new directory and
// loads them.
func testDocs(t *testing.T, files map[string]string) *Docs {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const page = "# Serving\n\nintro\n\n## Limits\n\nlimits text\n\n```sh\n# not a heading\ntoolc serve\n```\n<!-- doctext: tested by TestX -->\n\n### Per caller\n\ncaller text\n\n## Shutting down\n\nbye\n"

func TestSection(t *testing.T) {
	d := testDocs(t, map[string]string{
		"README.md":       "# toolc\n\n## Set-up\n\nrun it\n",
		"docs/serving.md": page,
		"docs/other.md":   "# Other\n\n## Shutting down\n\nagain\n",
	})
	for _, c := range []struct {
		title, want, path, err string
	}{
		{"Set-up", "\nrun it\n", "README.md", ""},
		{"Limits", "\nlimits text\n\n```sh\n# not a heading\ntoolc serve\n```\n<!-- doctext: tested by TestX -->\n\n### Per caller\n\ncaller text\n\n", "docs/serving.md", ""},
		{"Per caller", "\ncaller text\n\n", "docs/serving.md", ""},
		{"not a heading", "", "", "no page"},
		{"Shutting down", "", "", "more than one"},
	} {
		body, h, err := d.Section(c.title)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Section(%q) = %v, want an error with %q", c.title, err, c.err)
			}
			continue
		}
		if err != nil || body != c.want || h.Path != c.path {
			t.Errorf("Section(%q) = %q in %s, %v; want %q in %s", c.title, body, h.Path, err, c.want, c.path)
		}
	}
}

func TestBlocks(t *testing.T) {
	text := "x\n```sh\na\n```\n<!-- doctext: illustrative: why -->\n- item:\n  ```json\n  {\"k\": 1}\n  ```\n````\n```\nin\n````\n"
	got := Blocks("p.md", text)
	want := []Block{
		{Path: "p.md", Line: 2, Lang: "sh", Text: "a\n", After: "<!-- doctext: illustrative: why -->"},
		{Path: "p.md", Line: 7, Lang: "json", Text: "{\"k\": 1}\n", After: "````"},
		{Path: "p.md", Line: 10, Lang: "", Text: "```\nin\n", After: ""},
	}
	if len(got) != len(want) {
		t.Fatalf("Blocks = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestAfter(t *testing.T) {
	d := testDocs(t, map[string]string{
		"README.md":       "one\nMARK\nrest of the README\n",
		"docs/serving.md": page + "TWICE\n",
		"docs/z.md":       "TWICE\n",
	})
	if rest, path, err := d.After("MARK\n"); err != nil || rest != "rest of the README\n" || path != "README.md" {
		t.Errorf("After(MARK) = %q, %q, %v", rest, path, err)
	}
	if _, _, err := d.After("TWICE"); err == nil {
		t.Error("After found a marker of two pages without an error")
	}
	if _, _, err := d.After("nowhere"); err == nil {
		t.Error("After found a marker that no page has")
	}
	b, err := d.BlockAfter("## Limits")
	if err != nil || b.Text != "# not a heading\ntoolc serve\n" || b.Path != "docs/serving.md" {
		t.Errorf("BlockAfter(## Limits) = %+v, %v", b, err)
	}
	bs, err := d.SectionBlocks("Limits")
	if err != nil || len(bs) != 1 || bs[0].Line != 9 {
		t.Errorf("SectionBlocks(Limits) = %+v, %v; want one block at line 9", bs, err)
	}
	if len(d.Files) != 3 || d.Files[0].Path != "README.md" || d.Files[1].Path != "docs/serving.md" {
		t.Errorf("Load read %v; want README.md first, then docs/ in name order", d.Files)
	}
}
