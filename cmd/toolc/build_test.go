package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// repoRoot is the module root, where examples/ lives.
const repoRoot = "../.."

var targets = []string{"openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "mcp"}

// twoTools is a clean contract with two tools, for --tools.
const twoTools = `package shop

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "shop"
	version:     "1.0.0"
	description: "A small shop"
	tools: find_item: {
		description: "Find an item"
		request: fields: q: {type: "string", description: "Search words", minLength: 1}
	}
	tools: buy_item: {
		description: "Buy an item"
		request: fields: {
			id: {type: "string", description: "Item ID"}
			count: {type: "integer", description: "How many", required: false, default: 1, minimum: 1, maximum: 9}
		}
	}
}
`

func TestBuild(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/shop.cue": twoTools})
	r := toolc(t, dir, "build")
	if r.status != 0 {
		t.Fatalf("build = %d\n%s", r.status, r.stderr)
	}
	if !regexp.MustCompile(`^toolc build: wrote toolc\.catalog\.json: 1 service, 2 tools\n$`).MatchString(r.stderr) || r.stdout != "" {
		t.Errorf("build said stdout %q, stderr %q", r.stdout, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "toolc.catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Format   string `json:"format"`
		Services []struct {
			Name  string `json:"name"`
			Dir   string `json:"dir"`
			Tools []struct {
				Name string `json:"name"`
				Pos  string `json:"pos"` // file:line:column
			} `json:"tools"`
		} `json:"services"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if file.Format != "toolc.catalog/v1" || len(file.Services) != 1 || file.Services[0].Dir != "svc" ||
		len(file.Services[0].Tools) != 2 || !strings.HasPrefix(file.Services[0].Tools[0].Pos, "svc/shop.cue:") {
		t.Errorf("unexpected catalog:\n%s", data)
	}
	assertFiles(t, dir, "svc", "toolc.catalog.json")

	t.Run("again gives the same bytes", func(t *testing.T) {
		if r := toolc(t, dir, "build", "-o", "again.json", "./svc"); r.status != 0 {
			t.Fatal(r.stderr)
		}
		again, _ := os.ReadFile(filepath.Join(dir, "again.json"))
		if !bytes.Equal(again, data) {
			t.Error("a second build differs")
		}
	})

	t.Run("-o under a file, which no directory can be made in", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r := toolc(t, dir, "build", "-o", "plain/cat.json")
		if r.status != 2 || !strings.Contains(r.stderr, "plain: not a directory") {
			t.Errorf("= %d %q, want 2 and the path named", r.status, r.stderr)
		}
		if strings.Contains(r.stderr, ".tmp") {
			t.Errorf("the error names the temporary file: %q", r.stderr)
		}
	})
}

// TestBuildErrorsWriteNothing: with contract errors, build exits 1 and
// leaves an existing catalog file exactly as it was.
func TestBuildErrorsWriteNothing(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/bad.cue": badContract, "toolc.catalog.json": "old contents\n"})
	r := toolc(t, dir, "build")
	if r.status != 1 {
		t.Fatalf("build with errors = %d, want 1\n%s", r.status, r.stderr)
	}
	if !strings.Contains(r.stderr, "3 errors; nothing written") || !strings.Contains(r.stderr, "[tool-name]") {
		t.Errorf("stderr %q lacks the diagnostics and \"nothing written\"", r.stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "toolc.catalog.json")); string(data) != "old contents\n" {
		t.Errorf("build with errors touched the catalog file: %q", data)
	}
	assertFiles(t, dir, "svc", "toolc.catalog.json")

	fresh := writeFiles(t, map[string]string{"svc/bad.cue": badContract})
	if r := toolc(t, fresh, "build", "-o", "out.json"); r.status != 1 {
		t.Fatalf("= %d", r.status)
	}
	assertFiles(t, fresh, "svc")
}

// TestBuildWarnings: warnings are shown, and the catalog is written.
func TestBuildWarnings(t *testing.T) {
	// A tool description over OpenAI's 1024 characters is a
	// provider-limit warning.
	long := strings.Replace(goodContract, `"Check that the service answers"`, `"`+strings.Repeat("Check that the service answers. ", 40)+`"`, 1)
	dir := writeFiles(t, map[string]string{"svc/warn.cue": long})
	r := toolc(t, dir, "build")
	if r.status != 0 || !strings.Contains(r.stderr, "[provider-limit]") {
		t.Errorf("= %d %q, want 0 and the warning", r.status, r.stderr)
	}
	assertFiles(t, dir, "svc", "toolc.catalog.json")
}

// TestExportWarnsAboutItsTarget: export warns about the projection it
// prints alone, in the mode it prints it in, naming that target: what
// --strict moves into descriptions included, Gemini's subset only for
// gemini, OpenAI's description limit only for OpenAI.
func TestExportWarnsAboutItsTarget(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/svc.cue": `package svc

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "svc"
	version:     "1.0.0"
	description: "A service"
	tools: pick: {
		description: "` + strings.Repeat("Pick some items from the list. ", 40) + `"
		request: fields: {
			name: {type: "string", description: "Name", minLength: 2}
			rank: {type: "integer", description: "Rank", enum: [1, 2, 3]}
			count: {type: "integer", description: "How many", required: false, default: 1, maximum: 9}
		}
	}
}
`})
	for _, tc := range []struct {
		args       []string
		want, none []string
	}{
		{[]string{"--format", "openai-chat"}, []string{"OpenAI accepts at most 1024"}, []string{"Gemini", "strict mode"}},
		{[]string{"--format", "openai-chat", "--strict"},
			[]string{"OpenAI accepts at most 1024", `OpenAI strict mode cannot express minLength on request field "name"`, `OpenAI strict mode cannot express default on request field "count"`},
			[]string{"Gemini", "Anthropic"}},
		{[]string{"--format", "gemini"}, []string{`Gemini cannot express enum on request field "rank"`}, []string{"OpenAI", "strict mode"}},
		{[]string{"--format", "anthropic"}, nil, []string{"warning"}},
		{[]string{"--format", "anthropic", "--strict"}, []string{`Anthropic strict mode cannot express maximum on request field "count"`, `Anthropic strict mode cannot express minLength`}, []string{"OpenAI", "Gemini"}},
		{[]string{"--format", "bedrock", "--strict"}, []string{`Bedrock strict mode cannot express maximum on request field "count"`}, []string{"OpenAI", "Gemini", "Anthropic"}},
		{[]string{"--format", "mcp", "--strict"}, nil, []string{"warning"}},
	} {
		r := toolc(t, dir, append([]string{"export"}, append(tc.args, "./svc")...)...)
		if r.status != 0 {
			t.Fatalf("export %v = %d: %s", tc.args, r.status, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("export %v does not warn %q:\n%s", tc.args, w, r.stderr)
			}
		}
		for _, n := range tc.none {
			if strings.Contains(r.stderr, n) {
				t.Errorf("export %v says %q, about another target:\n%s", tc.args, n, r.stderr)
			}
		}
	}
	// toolc check warns about every target, each tool in its own mode.
	r := toolc(t, dir, "check", "./svc")
	for _, w := range []string{"OpenAI accepts at most 1024", "Gemini cannot express enum"} {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("check does not warn %q:\n%s%s", w, r.stdout, r.stderr)
		}
	}
}

// TestExportExamples: export of every example in every format is the
// projection pinned in catalog/testdata/golden, from contracts and from a
// built catalog alike.
func TestExportExamples(t *testing.T) {
	tmp := t.TempDir()
	contracts, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "*.cue"))
	// examples/embed keeps its contract in examples/embed/notes.
	deeper, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "*", "*.cue"))
	contracts = append(contracts, deeper...)
	if err != nil || len(contracts) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	seen := map[string]bool{}
	for _, c := range contracts {
		rel, _ := filepath.Rel(filepath.Join(repoRoot, "examples"), c)
		ex, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if seen[ex] {
			continue
		}
		seen[ex] = true
		cat := filepath.Join(tmp, ex+".json")
		if r := toolc(t, repoRoot, "build", "-o", cat, "./examples/"+ex+"/..."); r.status != 0 {
			t.Fatalf("build %s = %d\n%s", ex, r.status, r.stderr)
		}
		for _, target := range targets {
			for _, strict := range []bool{false, true} {
				args := []string{"export", "--format", target}
				golden := target
				if strict {
					args = append(args, "--strict")
					golden += ".strict"
				}
				want, err := os.ReadFile(filepath.Join(repoRoot, "catalog", "testdata", "golden", ex, golden+".json"))
				if err != nil {
					t.Fatal(err)
				}
				r := toolc(t, repoRoot, append(args, "./examples/"+ex+"/...")...)
				if r.status != 0 || r.stdout != string(want) {
					t.Errorf("toolc %s ./examples/%s = %d, and stdout is not %s.json\n%s", strings.Join(args, " "), ex, r.status, golden, r.stderr)
				}
				if !json.Valid([]byte(r.stdout)) {
					t.Errorf("toolc %s: stdout is not JSON", strings.Join(args, " "))
				}
				r = toolc(t, repoRoot, append(args, "--catalog", cat)...)
				if r.status != 0 || r.stdout != string(want) {
					t.Errorf("toolc %s --catalog = %d, and stdout is not %s.json\n%s", strings.Join(args, " "), r.status, golden, r.stderr)
				}
			}
		}
	}
}

func TestExport(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/shop.cue": twoTools})

	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			r := toolc(t, dir, "export", "--format", target)
			if r.status != 0 {
				t.Fatalf("= %d\n%s", r.status, r.stderr)
			}
			var v []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || len(v) == 0 {
				t.Fatalf("stdout is not a JSON array of tools: %v\n%s", err, r.stdout)
			}
			if r.stderr != "" {
				t.Errorf("a clean export wrote to stderr: %q", r.stderr)
			}
		})
	}

	t.Run("--strict", func(t *testing.T) {
		var loose, strict []struct {
			Function struct {
				Strict     bool `json:"strict"`
				Parameters struct {
					Required []string `json:"required"`
				} `json:"parameters"`
			} `json:"function"`
		}
		mustJSON(t, toolc(t, dir, "export", "--format", "openai-chat"), &loose)
		mustJSON(t, toolc(t, dir, "export", "--format", "openai-chat", "--strict"), &strict)
		// buy_item is second: tools and fields are in declaration order.
		if loose[1].Function.Strict || !strict[1].Function.Strict {
			t.Errorf("strict = %v without --strict and %v with it", loose[1].Function.Strict, strict[1].Function.Strict)
		}
		if got := strings.Join(strict[1].Function.Parameters.Required, ","); got != "id,count" {
			t.Errorf("strict required = %s, want id,count", got)
		}
		if got := strings.Join(loose[1].Function.Parameters.Required, ","); got != "id" {
			t.Errorf("required = %s, want id", got)
		}
	})

	t.Run("--tools", func(t *testing.T) {
		var tools []struct {
			Name string `json:"name"`
		}
		mustJSON(t, toolc(t, dir, "export", "--format", "anthropic", "--tools", "find_item"), &tools)
		if len(tools) != 1 || tools[0].Name != "find_item" {
			t.Errorf("--tools find_item exported %+v", tools)
		}
		mustJSON(t, toolc(t, dir, "export", "--format", "anthropic", "--tools", " find_item, buy_item ,"), &tools)
		if len(tools) != 2 {
			t.Errorf("--tools with spaces and a trailing comma exported %+v", tools)
		}
		// With --format mcp, the MCP names that clients know work too.
		mustJSON(t, toolc(t, dir, "export", "--format", "mcp", "--tools", "shop_find_item,buy_item"), &tools)
		if len(tools) != 2 || tools[0].Name != "shop_buy_item" || tools[1].Name != "shop_find_item" {
			t.Errorf("--format mcp --tools shop_find_item,buy_item exported %+v", tools)
		}
	})

	t.Run("flags after the pattern", func(t *testing.T) {
		r := toolc(t, dir, "export", "./svc", "--format", "bedrock")
		if r.status != 0 || !strings.Contains(r.stdout, `"toolSpec"`) {
			t.Errorf("= %d %q", r.status, r.stderr)
		}
	})
}

// TestExportErrors: every usage and input problem exits 2, says what is
// wrong on stderr, and prints nothing on stdout.
func TestExportErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/shop.cue": twoTools, "empty/README": "nothing"})
	if r := toolc(t, dir, "build", "-o", "good.json"); r.status != 0 {
		t.Fatal(r.stderr)
	}
	good, err := os.ReadFile(filepath.Join(dir, "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(name, old, new string) {
		t.Helper()
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("the catalog lacks %q", old)
		}
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Replace(good, []byte(old), []byte(new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("edited.json", `"Find an item"`, `"Find any item"`)
	edit("v2.json", `"toolc.catalog/v1"`, `"toolc.catalog/v2"`)
	if err := os.WriteFile(filepath.Join(dir, "cut.json"), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	bad := writeFiles(t, map[string]string{"svc/bad.cue": badContract})

	tests := []struct {
		name   string
		dir    string
		args   []string
		status int
		stderr string // regexp
	}{
		{"no format", dir, []string{"export"}, 2, `--format is required \(openai-chat, openai-responses, anthropic, gemini, bedrock, mcp\)`},
		{"unknown format", dir, []string{"export", "--format", "openai"}, 2, `unknown format "openai" \(want openai-chat, .*mcp\)`},
		{"unknown tool", dir, []string{"export", "--format", "anthropic", "--tools", "find_item,sell_item"}, 2, `--tools: unknown tool "sell_item" \(closest: "buy_item", "find_item"\)`},
		{"hand-edited catalog", dir, []string{"export", "--format", "mcp", "--catalog", "edited.json"}, 2,
			`edited\.json: catalog: tool "find_item" of service "shop" does not match its fingerprint: the file was edited or damaged; rebuild it with toolc build`},
		{"newer catalog", dir, []string{"export", "--format", "mcp", "--catalog", "v2.json"}, 2, `v2\.json: catalog: format "toolc\.catalog/v2" is newer than "toolc\.catalog/v1"`},
		{"truncated catalog", dir, []string{"export", "--format", "mcp", "--catalog", "cut.json"}, 2, `cut\.json: catalog: truncated file`},
		{"missing catalog", dir, []string{"export", "--format", "mcp", "--catalog", "nope.json"}, 2, `nope\.json: no such file or directory`},
		{"catalog and patterns", dir, []string{"export", "--format", "mcp", "--catalog", "good.json", "./svc"}, 2, `give --catalog or patterns, not both`},
		{"pattern matches nothing", dir, []string{"export", "--format", "mcp", "./empty/..."}, 2, `matched no`},
		{"missing directory", dir, []string{"export", "--format", "mcp", "./nowhere"}, 2, `no such file or directory`},
		{"unknown flag", dir, []string{"export", "--format", "mcp", "--pretty"}, 2, `flag provided but not defined: -pretty`},
		{"contract errors", bad, []string{"export", "--format", "mcp"}, 1, `3 errors; nothing written`},
		{"build: pattern matches nothing", dir, []string{"build", "-o", "x.json", "./empty/..."}, 2, `matched no`},
		{"build: unknown flag", dir, []string{"build", "--format", "mcp"}, 2, `flag provided but not defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := toolc(t, tt.dir, tt.args...)
			if r.status != tt.status {
				t.Fatalf("exit status %d, want %d\nstderr: %s", r.status, tt.status, r.stderr)
			}
			if !regexp.MustCompile(tt.stderr).MatchString(r.stderr) {
				t.Errorf("stderr %q does not match %q", r.stderr, tt.stderr)
			}
			if r.stdout != "" && tt.status == 2 {
				t.Errorf("a failed export printed to stdout: %q", r.stdout)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
		t.Error("a failed build wrote x.json")
	}
}

func mustJSON(t *testing.T, r result, v any) {
	t.Helper()
	if r.status != 0 {
		t.Fatalf("= %d\n%s", r.status, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
}

// assertFiles checks that dir holds exactly these entries: no temporary
// file, no half-written catalog.
func assertFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// TestBuildMakesOutputDirectory: -o into a directory that does not exist
// makes it, and writes the catalog there by rename, leaving no temporary
// file; a build that fails makes no directory.
func TestBuildMakesOutputDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/good.cue": goodContract})
	r := toolc(t, dir, "build", "-o", "dist/catalogs/x.json")
	if r.status != 0 {
		t.Fatalf("build -o dist/catalogs/x.json = %d\n%s", r.status, r.stderr)
	}
	if _, err := catalog.LoadFile(filepath.Join(dir, "dist", "catalogs", "x.json")); err != nil {
		t.Errorf("the catalog written: %v", err)
	}
	assertFiles(t, filepath.Join(dir, "dist", "catalogs"), "x.json")

	bad := writeFiles(t, map[string]string{"svc/bad.cue": badContract})
	if r := toolc(t, bad, "build", "-o", "dist/x.json"); r.status != 1 {
		t.Fatalf("build with errors = %d", r.status)
	}
	assertFiles(t, bad, "svc")
}
