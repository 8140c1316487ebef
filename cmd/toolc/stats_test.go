package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

func TestCheckStats(t *testing.T) {
	good := writeFiles(t, map[string]string{"svc/good.cue": goodContract})
	bad := writeFiles(t, map[string]string{"svc/bad.cue": badContract})

	r := toolc(t, good, "check")
	if r.status != 0 || !regexp.MustCompile(`(?m)^toolc check: tokens per request: openai \d+, anthropic ~\d+, gemini ~\d+, bedrock ~\d+, mcp \d+ \(--stats for each tool\)$`).MatchString(r.stderr) {
		t.Errorf("toolc check: exit %d, stderr:\n%s", r.status, r.stderr)
	}
	if strings.Contains(r.stdout, "TOOL") {
		t.Errorf("toolc check without --stats printed a table:\n%s", r.stdout)
	}

	r = toolc(t, good, "check", "--stats")
	if r.status != 0 || !regexp.MustCompile(`(?m)^good/ping +\d+ +\d+ +~\d+ +~\d+ +~\d+ +~\d+ +~\d+ +\d+$`).MatchString(r.stdout) {
		t.Errorf("toolc check --stats: exit %d, stdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}

	// Contracts with errors cost nothing yet: no line, no table.
	r = toolc(t, bad, "check", "--stats")
	if r.status != 1 || strings.Contains(r.stderr, "tokens per request") || strings.Contains(r.stdout, "TOOL") {
		t.Errorf("toolc check --stats with errors: exit %d, stdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}

	r = toolc(t, good, "check", "--stats", "--format", "json")
	if r.status != 2 || !strings.Contains(r.stderr, "--stats prints a table, which --format json has no room for") {
		t.Errorf("toolc check --stats --format json: exit %d, stderr:\n%s", r.status, r.stderr)
	}
}

// TestREADMECheckStats runs the README's toolc check examples on
// examples/weather and compares what they print with the README.
func TestREADMECheckStats(t *testing.T) {
	d := docs(t)
	for _, cmd := range []string{"$ toolc check --stats ./examples/weather\n", "$ go run ./cmd/toolc check ./examples/weather\n"} {
		block, _, err := d.After("```\n" + cmd)
		block, _, ok := strings.Cut(block, "```")
		if err != nil || !ok {
			t.Fatalf("README.md has no block of %q", cmd)
		}
		args := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(cmd, "$ "), "go run ./cmd/"))[1:]
		r := toolc(t, "../..", args...)
		if got := r.stdout + r.stderr; got != block {
			t.Errorf("%sprints\n%s\nthe README says\n%s", cmd, got, block)
		}
	}
}

// TestDiffTokens: toolc diff says what the change costs in tokens, in
// total and per tool, in every format.
func TestDiffTokens(t *testing.T) {
	dir := writeFiles(t, map[string]string{"svc/good.cue": goodContract})
	if r := toolc(t, dir, "build", "-o", "old.catalog.json"); r.status != 0 {
		t.Fatalf("toolc build: %d\n%s", r.status, r.stderr)
	}
	if r := toolc(t, dir, "diff", "--against", "old.catalog.json"); r.status != 0 || strings.Contains(r.stdout+r.stderr, "token") {
		t.Errorf("toolc diff without a change: exit %d, stdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	longer := strings.Replace(goodContract, `"Check that the service answers"`, `"Check that the service answers, and say how long it took to answer, in milliseconds"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "svc", "good.cue"), []byte(longer), 0o644); err != nil {
		t.Fatal(err)
	}
	r := toolc(t, dir, "diff", "--against", "old.catalog.json")
	total := `\+\d+ tokens on every openai request \(\d+ → \d+\); about \+\d+ on every anthropic request \(\d+ → \d+\); about \+\d+ on every gemini request \(\d+ → \d+\); about \+\d+ on every bedrock request \(\d+ → \d+\); \+\d+ on every mcp request \(\d+ → \d+\)`
	for _, re := range []string{
		`(?m)^compatible: ` + total + ` \[token-growth\]$`,
		`(?m)^svc/good.cue:9:9: compatible: tool "ping" of service "good": \+\d+ tokens on every openai request .* \[token-growth\]$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("toolc diff's stdout does not match %s:\n%s", re, r.stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^toolc diff: against old.catalog.json: 0 breaking, 0 allowed by a major version bump, 1 compatible\ntoolc diff: tokens: ` + total + `$`).MatchString(r.stderr) {
		t.Errorf("toolc diff's stderr:\n%s", r.stderr)
	}
	r = toolc(t, dir, "diff", "--against", "old.catalog.json", "--format", "github")
	if !regexp.MustCompile(`(?m)^::notice file=svc/good.cue,line=9,col=9,title=token-growth::tool "ping" of service "good": \+\d+ tokens`).MatchString(r.stdout) {
		t.Errorf("toolc diff --format github:\n%s", r.stdout)
	}
	r = toolc(t, dir, "diff", "--against", "old.catalog.json", "--format", "json")
	var changes []struct {
		Rule   string
		Tool   string
		Tokens []struct {
			Target        string
			Before, After int
			Estimate      bool
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &changes); err != nil {
		t.Fatalf("toolc diff --format json: %v\n%s", err, r.stdout)
	}
	n := 0
	for _, c := range changes {
		if c.Rule != "token-growth" {
			continue
		}
		n++
		if len(c.Tokens) != 5 || c.Tokens[0].Target != "openai" || c.Tokens[0].After <= c.Tokens[0].Before || c.Tokens[0].Estimate || !c.Tokens[1].Estimate {
			t.Errorf("token-growth of %q: %+v", c.Tool, c.Tokens)
		}
	}
	if n != 2 {
		t.Errorf("%d token-growth changes, want the request's and ping's:\n%s", n, r.stdout)
	}
}

// TestREADMEBudget checks the README's token-budget errors against what
// toolc check prints for the shop service of the rule's fixture, which
// the README shows.
func TestREADMEBudget(t *testing.T) {
	ar, err := txtar.ParseFile("../../compiler/testdata/rules/token-budget.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		if f.Name == "shop/shop.cue" {
			files[f.Name] = string(f.Data)
		}
	}
	r := toolc(t, writeFiles(t, files), "check")
	section := docs(t).MustSection(t, "Token budgets")
	_, block, _ := strings.Cut(section, "```\nshop/")
	block, _, _ = strings.Cut("shop/"+block, "```")
	if !strings.Contains(block, "[token-budget]") {
		t.Fatal("README.md's Token budgets section has no output block")
	}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("toolc check does not print the README's\n%s\nit prints:\n%s", line, r.stdout)
		}
	}
}
