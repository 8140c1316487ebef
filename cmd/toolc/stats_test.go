package main

import (
	"regexp"
	"strings"
	"testing"
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
	readme := readFile(t, "../../README.md")
	for _, cmd := range []string{"$ toolc check --stats ./examples/weather\n", "$ go run ./cmd/toolc check ./examples/weather\n"} {
		_, block, ok := strings.Cut(readme, "```\n"+cmd)
		block, _, ok2 := strings.Cut(block, "```")
		if !ok || !ok2 {
			t.Fatalf("README.md has no block of %q", cmd)
		}
		args := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(cmd, "$ "), "go run ./cmd/"))[1:]
		r := toolc(t, "../..", args...)
		if got := r.stdout + r.stderr; got != block {
			t.Errorf("%sprints\n%s\nthe README says\n%s", cmd, got, block)
		}
	}
}
