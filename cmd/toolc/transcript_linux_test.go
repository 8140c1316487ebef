package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/doctext"
)

// transcriptStep is one command of a transcript block ("$ command", and
// the lines it goes on over after a backslash or a pipe) and the output
// the block shows for it.
type transcriptStep struct {
	cmd string
	out []string
}

// transcriptSteps splits a block of "$ " commands and their output.
func transcriptSteps(text string) []transcriptStep {
	var steps []transcriptStep
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		cmd, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			if len(steps) > 0 {
				steps[len(steps)-1].out = append(steps[len(steps)-1].out, lines[i])
			}
			continue
		}
		// A command goes on after a backslash or a pipe at the end of a
		// line, and inside a quoted argument that a line break splits.
		for (strings.HasSuffix(cmd, "\\") || strings.HasSuffix(cmd, "|") || strings.Count(cmd, "'")%2 == 1) && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		steps = append(steps, transcriptStep{cmd: cmd})
	}
	return steps
}

// matchTranscript reports the first line of want that the output does not
// show, in order: each line of want must be a line of got, after the one
// that matched the line before it, where "..." stands for any text; a
// line that is only "..." stands for any lines.
func matchTranscript(want []string, got string) (missing string, ok bool) {
	gotLines := strings.Split(got, "\n")
	at := 0
	for _, w := range want {
		if strings.TrimSpace(w) == "..." || strings.TrimSpace(w) == "" {
			continue
		}
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(w), `\.\.\.`, ".*") + "$")
		found := false
		for at < len(gotLines) {
			at++
			if re.MatchString(gotLines[at-1]) {
				found = true
				break
			}
		}
		if !found {
			return w, false
		}
	}
	return "", true
}

// TestDocsTranscripts runs every block of README.md and docs/*.md marked
// "<!-- doctext: tested by TestDocsTranscripts -->": each "$ " command as
// printed, with sh, in a copy of the checkout with the toolc under test
// on PATH and a network namespace of its own, and checks that its output
// (standard output and error) shows the block's lines, in order ("..."
// stands for what the block leaves out). The exit status is not checked:
// a transcript shows what a command prints, and some show a refusal.
//
// A block whose marker goes on "; after: COMMAND" shows what the
// commands print after an edit that its text describes: the test runs
// COMMAND in a copy of the checkout of the block's own, then the block.
//
// A block whose marker goes on "; toolc serve ARGS" talks to a server
// that the text around it starts: the test starts it on
// 127.0.0.1:8931 in the block's namespace, waits for it with toolc
// health, runs the block's commands one after another in one shell, and
// stops it.
func TestDocsTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the examples' handlers")
	}
	t.Parallel() // a copy of the checkout, and a namespace per command
	var blocks []doctext.Block
	for _, f := range docs(t).Files {
		for _, b := range doctext.Blocks(f.Path, f.Text) {
			if strings.Contains(b.After, "TestDocsTranscripts") {
				blocks = append(blocks, b)
			}
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("%d blocks of the documentation are marked as transcripts of this test; the parser misses some", len(blocks))
	}
	dir := copyCheckout(t)
	env := append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, b := range blocks {
		steps := transcriptSteps(b.Text)
		if len(steps) == 0 {
			t.Errorf("%s:%d: the block is marked as a transcript and has no \"$ \" command", b.Path, b.Line)
		}
		if _, edit, ok := strings.Cut(strings.TrimSuffix(b.After, " -->"), "; after: "); ok {
			t.Run(fmt.Sprintf("%s:%d", b.Path, b.Line), func(t *testing.T) {
				edited(t, env, edit, steps)
			})
			continue
		}
		if _, serve, ok := strings.Cut(strings.TrimSuffix(b.After, " -->"), "; toolc serve "); ok {
			t.Run(fmt.Sprintf("%s:%d", b.Path, b.Line), func(t *testing.T) {
				served(t, dir, env, serve, steps)
			})
			continue
		}
		for i, s := range steps {
			t.Run(fmt.Sprintf("%s:%d/%d", b.Path, b.Line, i+1), func(t *testing.T) {
				cmd := namespaced(t, false, s.cmd)
				cmd.Dir = dir
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				if missing, ok := matchTranscript(s.out, string(out)); !ok {
					t.Errorf("$ %s\n(%v) printed\n%s\nwhich does not show, in order, the documentation's line\n%s", s.cmd, err, out, missing)
				}
			})
		}
	}
}

// edited runs the steps of a block in a copy of the checkout of its own,
// after the command edit, which makes the change that the text before
// the block describes ("maximum went down from 14 to 7").
func edited(t *testing.T, env []string, edit string, steps []transcriptStep) {
	dir := copyCheckout(t)
	prep := namespaced(t, false, edit)
	prep.Dir = dir
	if out, err := prep.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", edit, err, out)
	}
	for _, s := range steps {
		cmd := namespaced(t, false, s.cmd)
		cmd.Dir = dir
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if missing, ok := matchTranscript(s.out, string(out)); !ok {
			t.Errorf("after %s:\n$ %s\n(%v) printed\n%s\nwhich does not show, in order, the documentation's line\n%s", edit, s.cmd, err, out, missing)
		}
	}
}

// stepSeparator goes between the outputs of the steps of a served block.
const stepSeparator = "@@doctext: the next step@@"

// served runs the steps of a block in one shell, against toolc serve
// --http 127.0.0.1:8931 with args, and matches each step's output.
func served(t *testing.T, dir string, env []string, args string, steps []transcriptStep) {
	var script strings.Builder
	script.WriteString("toolc serve --http 127.0.0.1:8931 " + args + " 2>serve.log &\n")
	script.WriteString("toolc health --wait 5m >/dev/null || { cat serve.log; exit 1; }\n")
	for _, s := range steps {
		script.WriteString("echo '" + stepSeparator + "'\n" + s.cmd + "\n")
	}
	script.WriteString("echo '" + stepSeparator + "'\nkill $!\nwait || true\n")
	cmd := namespaced(t, false, script.String())
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	parts := strings.Split(string(out), stepSeparator+"\n")
	if err != nil || len(parts) != len(steps)+2 {
		t.Fatalf("the block's commands against toolc serve --http 127.0.0.1:8931 %s: %v\n%s", args, err, out)
	}
	for i, s := range steps {
		if missing, ok := matchTranscript(s.out, parts[i+1]); !ok {
			t.Errorf("$ %s\nprinted\n%s\nwhich does not show, in order, the documentation's line\n%s", s.cmd, parts[i+1], missing)
		}
	}
}

// TestMatchTranscript holds the transcript matcher to its rules: lines in
// order, "..." within a line and as a line of its own.
func TestMatchTranscript(t *testing.T) {
	got := "a\nb 1 c\nd\ne\n"
	for _, c := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"a", "d"}, true},
		{[]string{"b ... c", "..."}, true},
		{[]string{"d", "a"}, false},
		{[]string{"b"}, false},
		{[]string{"a", "a"}, false},
		{[]string{"x..."}, false},
	} {
		if _, ok := matchTranscript(c.want, got); ok != c.ok {
			t.Errorf("matchTranscript(%q) = %t, want %t", c.want, ok, c.ok)
		}
	}
}
