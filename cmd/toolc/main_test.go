package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The end-to-end tests run the real binary, built once, as a user or a CI
// script would.
var toolcBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolc-e2e")
	if err != nil {
		panic(err)
	}
	toolcBin = filepath.Join(dir, "toolc")
	if runtime.GOOS == "windows" {
		toolcBin += ".exe"
	}
	build := exec.Command("go", "build", "-o", toolcBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building toolc: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	status         int
	stdout, stderr string
}

func toolc(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(toolcBin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r := result{status, stdout.String(), stderr.String()}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") {
			t.Fatalf("toolc %s showed a Go stack trace:\n%s", strings.Join(args, " "), s)
		}
	}
	return r
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodContract = `package good

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "good"
	version:     "1.0.0"
	description: "A service that passes"
	tools: ping: {
		description: "Check that the service answers"
		request: fields: {}
	}
}
`

// badContract has three errors: a tool name, a missing description and an
// inverted bound.
const badContract = `package bad

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "bad"
	version:     "1.0.0"
	description: "A service with problems"
	tools: GetThing: {
		description: "Get a thing"
		request: fields: {
			id: {type: "string"}
			n: {type: "integer", description: "How many", minimum: 5, maximum: 1}
		}
	}
}
`

const warnContract = `package warn

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "warn"
	version:     "1.0.0"
	description: "A service with a provider-limit warning"
	tools: pick: {
		description: "Pick a level"
		request: fields: level: {type: "integer", description: "Level", enum: [1, 2, 3]}
	}
}
`

func TestCheckExitStatus(t *testing.T) {
	good := writeFiles(t, map[string]string{"svc/good.cue": goodContract})
	bad := writeFiles(t, map[string]string{"svc/bad.cue": badContract})
	warn := writeFiles(t, map[string]string{"svc/warn.cue": warnContract})
	empty := writeFiles(t, map[string]string{"README": "no contracts here"})
	broken := writeFiles(t, map[string]string{"svc/good.cue": goodContract})
	if err := os.Symlink(filepath.Join(broken, "nowhere.cue"), filepath.Join(broken, "svc", "dangling.cue")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		dir    string
		args   []string
		status int
		stderr string // regexp
	}{
		{"clean", good, []string{"check"}, 0, `1 package, 1 tool: 0 errors, 0 warnings`},
		{"clean explicit pattern", good, []string{"check", "./svc"}, 0, ``},
		{"errors", bad, []string{"check", "./..."}, 1, `3 errors`},
		{"warnings only", warn, []string{"check"}, 0, `0 errors, 1 warning`},
		{"pattern matches nothing", empty, []string{"check", "./..."}, 2, `matched no CUE packages`},
		{"missing directory", good, []string{"check", "./nope"}, 2, `no such file or directory`},
		{"directory without cue files", empty, []string{"check", "."}, 2, `no .cue files`},
		{"unreadable file", broken, []string{"check", "./svc"}, 2, `dangling.cue`},
		{"unknown format", good, []string{"check", "--format", "xml"}, 2, `unknown format "xml"`},
		{"unknown flag", good, []string{"check", "--nope"}, 2, `flag provided but not defined`},
		{"unknown command", good, []string{"frobnicate"}, 2, `unknown command`},
		{"no command", good, nil, 2, `Usage`},
		{"flags after patterns", bad, []string{"check", "./...", "--format", "json"}, 1, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := toolc(t, tt.dir, tt.args...)
			if r.status != tt.status {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.status, tt.status, r.stdout, r.stderr)
			}
			if !regexp.MustCompile(tt.stderr).MatchString(r.stderr) {
				t.Errorf("stderr %q does not match %q", r.stderr, tt.stderr)
			}
		})
	}
}

func TestCheckFormats(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/bad.cue": badContract})

	t.Run("text", func(t *testing.T) {
		r := toolc(t, dir, "check")
		want := "svc/bad.cue:9:9: error: tool name \"GetThing\" must start with a lower-case letter and hold only letters, digits, underscores and hyphens, at most 64 characters; try \"get_thing\" (a rename changes the wire contract: models, prompts and clients that call \"GetThing\" must change too); to keep the name MCP clients call, add mcp: name: \"GetThing\" to the renamed tool [tool-name]\n" +
			"\t\ttools: GetThing: {\n" +
			"\t\t       ^\n"
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text output lacks\n%s\ngot:\n%s", want, r.stdout)
		}
		for _, re := range []string{
			`(?m)^svc/bad.cue:12:4: error: request field "id" of tool "GetThing" has no description.* \[description\]$`,
			`(?m)^svc/bad.cue:13:62: error: maximum 1 of request field "n" .* \[bounds\]$`,
		} {
			if !regexp.MustCompile(re).MatchString(r.stdout) {
				t.Errorf("text output does not match %s:\n%s", re, r.stdout)
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		r := toolc(t, dir, "check", "--format", "json")
		var ds []struct {
			File     string `json:"file"`
			Line     int    `json:"line"`
			Column   int    `json:"column"`
			Severity string `json:"severity"`
			Rule     string `json:"rule"`
			Message  string `json:"message"`
		}
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ds); err != nil {
			t.Fatalf("output is not a JSON array of diagnostics: %v\n%s", err, r.stdout)
		}
		var got []string
		for _, d := range ds {
			if d.Severity != "error" || d.Message == "" {
				t.Errorf("bad diagnostic %+v", d)
			}
			got = append(got, strings.Join([]string{d.File, strconv.Itoa(d.Line), strconv.Itoa(d.Column), d.Rule}, ":"))
		}
		want := []string{"svc/bad.cue:9:9:tool-name", "svc/bad.cue:12:4:description", "svc/bad.cue:13:62:bounds"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("diagnostics = %v, want %v", got, want)
		}
		if r.stderr != "" {
			t.Errorf("json mode wrote to stderr: %q", r.stderr)
		}
	})

	t.Run("json empty", func(t *testing.T) {
		good := writeFiles(t, map[string]string{"svc/good.cue": goodContract})
		r := toolc(t, good, "check", "--format", "json")
		if strings.TrimSpace(r.stdout) != "[]" || r.status != 0 {
			t.Errorf("clean json check = %d %q, want 0 []", r.status, r.stdout)
		}
	})

	t.Run("github", func(t *testing.T) {
		r := toolc(t, dir, "check", "--format", "github")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 3 {
			t.Fatalf("want 3 annotations, got:\n%s", r.stdout)
		}
		want := `::error file=svc/bad.cue,line=9,col=9,title=tool-name::tool name "GetThing" must start with a lower-case letter`
		if !strings.HasPrefix(lines[0], want) {
			t.Errorf("first annotation = %q, want prefix %q", lines[0], want)
		}
		for _, l := range lines {
			if !regexp.MustCompile(`^::error file=[^,]+,line=\d+,col=\d+,title=[a-z-]+::.+$`).MatchString(l) {
				t.Errorf("not a workflow command: %q", l)
			}
		}
	})

	t.Run("github warning", func(t *testing.T) {
		warn := writeFiles(t, map[string]string{"svc/warn.cue": warnContract})
		r := toolc(t, warn, "check", "--format", "github")
		if !strings.HasPrefix(r.stdout, "::warning file=svc/warn.cue,line=11,") || r.status != 0 {
			t.Errorf("got %d %q", r.status, r.stdout)
		}
	})
}

func TestExamplesPass(t *testing.T) {
	r := toolc(t, "../..", "check", "./examples/...")
	if r.status != 0 {
		t.Fatalf("toolc check ./examples/... = %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	// Every example's handler is a main package, so that the README's
	// toolc dev ./examples/... can run them all (examples/embed keeps its
	// tools in a library, and its handler in notes/plugin).
	if strings.Contains(r.stdout, "[handler]") {
		t.Errorf("toolc check ./examples/... warns of a handler that toolc dev cannot run:\n%s", r.stdout)
	}
}

func TestRulesCommand(t *testing.T) {
	r := toolc(t, ".", "rules")
	for _, id := range []string{"syntax", "schema", "service-name", "tool-name", "field-name", "description", "single-request",
		"flat-fields", "enum", "default", "bounds", "example", "unique-name", "mcp-name", "provider-limit"} {
		if !regexp.MustCompile(`(?m)^` + id + `\s`).MatchString(r.stdout) {
			t.Errorf("toolc rules does not list %s", id)
		}
	}
	r = toolc(t, ".", "rules", "--format", "json")
	var rules []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &rules); err != nil || len(rules) < 15 {
		t.Errorf("rules --format json = %v, %d rules", err, len(rules))
	}
}

func TestVersion(t *testing.T) {
	r := toolc(t, ".", "version")
	if r.status != 0 || !strings.HasPrefix(r.stdout, "toolc ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("version = %d %q", r.status, r.stdout)
	}
}

// TestCheckAcknowledged: a warning that a toolc:ignore comment acknowledges
// is not printed but counted in the summary, and --format json lists it,
// marked, with the comment's reason.
func TestCheckAcknowledged(t *testing.T) {
	contract := strings.Replace(warnContract, "\ttools: pick: {", "\t// toolc:ignore provider-limit Gemini shows the levels in the description, which is enough\n\ttools: pick: {", 1)
	dir := writeFiles(t, map[string]string{"svc/warn.cue": contract})
	r := toolc(t, dir, "check")
	if r.status != 0 || r.stdout != "" || !strings.Contains(r.stderr, "1 package, 1 tool: 0 errors, 0 warnings (1 acknowledged)\n") {
		t.Errorf("toolc check: status %d\nstdout:\n%s\nstderr:\n%s\nwant no output and 0 warnings (1 acknowledged)", r.status, r.stdout, r.stderr)
	}
	r = toolc(t, dir, "check", "--format", "json")
	var ds []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &ds); err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0]["rule"] != "provider-limit" || ds[0]["acknowledged"] != true || ds[0]["reason"] != "Gemini shows the levels in the description, which is enough" {
		t.Errorf("toolc check --format json = %s, want the provider-limit warning, acknowledged, with its reason", r.stdout)
	}
	if r = toolc(t, dir, "check", "--format", "github"); r.stdout != "" {
		t.Errorf("toolc check --format github printed an acknowledged warning:\n%s", r.stdout)
	}
}
