package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/internal/cli"
	"github.com/toolc/toolc/internal/cliflag"
)

// TestUsageListsEveryFlag asks each command for -h, as a user would, and
// checks that its usage line names every flag it defines (the list that
// follows the line, from the flag set), and that toolc help and the
// README's synopses agree with it word for word.
func TestUsageListsEveryFlag(t *testing.T) {
	help := toolc(t, ".", "help")
	if help.status != 0 {
		t.Fatalf("toolc help: %d\n%s", help.status, help.stderr)
	}
	listed := map[string]string{} // command → usage line
	for _, l := range strings.Split(help.stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "\ttoolc "); ok {
			name, _, _ := strings.Cut(rest, " ")
			listed[name] = "toolc " + rest
		}
	}
	if len(listed) != len(commands()) {
		t.Errorf("toolc help lists %d commands, want %d:\n%s", len(listed), len(commands()), help.stdout)
	}
	flagLine := regexp.MustCompile(`(?m)^  --?(\S+)`)
	readme := readmeSynopses(t)
	for _, c := range commands() {
		r := toolc(t, ".", c.Name, "-h")
		if r.status != 0 {
			t.Errorf("toolc %s -h: exit %d\n%s", c.Name, r.status, r.stderr)
			continue
		}
		first, defaults, _ := strings.Cut(r.stderr, "\n")
		usage, ok := strings.CutPrefix(first, "usage: ")
		if !ok {
			t.Errorf("toolc %s -h does not begin with a usage line:\n%s", c.Name, r.stderr)
			continue
		}
		words := strings.FieldsFunc(usage, func(r rune) bool { return strings.ContainsRune(" []|", r) })
		for _, m := range flagLine.FindAllStringSubmatch(defaults, -1) {
			if name := m[1]; !slices.Contains(words, cliflag.Dashes(name)+name) {
				t.Errorf("toolc %s: usage %q does not name %s%s", c.Name, usage, cliflag.Dashes(name), name)
			}
		}
		for _, w := range words {
			if strings.HasPrefix(w, "-") && !regexp.MustCompile(`(?m)^  --?`+regexp.QuoteMeta(strings.TrimLeft(w, "-"))+`\b`).MatchString(defaults) {
				t.Errorf("toolc %s: usage %q names %s, which is not one of its flags", c.Name, usage, w)
			}
		}
		if listed[c.Name] != usage {
			t.Errorf("toolc help lists\n\t%s\nbut toolc %s -h says\n\t%s", listed[c.Name], c.Name, usage)
		}
		for _, s := range readme[c.Name] {
			if s != usage {
				t.Errorf("README.md has the synopsis\n\t%s\nbut toolc %s -h says\n\t%s", s, c.Name, usage)
			}
		}
		if len(readme[c.Name]) == 0 {
			t.Errorf("README.md has no synopsis of toolc %s", c.Name)
		}
	}
}

// readmeSynopses collects the synopses in README.md's code blocks: lines
// "toolc COMMAND [...", "toolc COMMAND --..." or "toolc COMMAND go [...",
// with the indented lines that continue them, less any # comment.
func readmeSynopses(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	start := regexp.MustCompile(`^toolc ([a-z]+)(\s|$)`)
	inBlock := false
	var cur *string
	var curCmd string
	flush := func() {
		if cur != nil {
			// A synopsis has [optional parts]; a command as run does not.
			if s := strings.Join(strings.Fields(*cur), " "); strings.Contains(s, "[") || s == "toolc "+curCmd {
				out[curCmd] = append(out[curCmd], s)
			}
			cur = nil
		}
	}
	for _, l := range strings.Split(docs(t).All(), "\n") {
		if strings.HasPrefix(l, "```") {
			flush()
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		l, _, _ = strings.Cut(l, "#")
		if cur != nil && strings.HasPrefix(l, " ") && strings.TrimSpace(l) != "" {
			*cur += " " + l
			continue
		}
		flush()
		if m := start.FindStringSubmatch(l); m != nil && isCommand(m[1]) {
			s := l
			cur, curCmd = &s, m[1]
		}
	}
	flush()
	return out
}

func isCommand(name string) bool {
	return slices.ContainsFunc(commands(), func(c cli.Command) bool { return c.Name == name })
}

// TestFlagListSpellsUsage checks that the flag list under each usage line
// spells every flag as the line does, "--catalog FILE" and not
// "-catalog string", so that a user reading either reads the same.
func TestFlagListSpellsUsage(t *testing.T) {
	entry := regexp.MustCompile(`(?m)^  (-\S+)( \S+)?$`)
	for _, c := range commands() {
		r := toolc(t, ".", c.Name, "-h")
		first, defaults, _ := strings.Cut(r.stderr, "\n")
		usage := strings.TrimPrefix(first, "usage: ")
		entries := entry.FindAllStringSubmatch(defaults, -1)
		if strings.Contains(usage, "-") && len(entries) == 0 {
			t.Errorf("toolc %s -h lists no flags:\n%s", c.Name, r.stderr)
		}
		for _, m := range entries {
			if !strings.Contains(usage, m[1]+m[2]) {
				t.Errorf("toolc %s -h lists %q, which its usage line %q does not spell so", c.Name, m[1]+m[2], usage)
			}
		}
	}
}

// TestHelpCommand: toolc help COMMAND says, on standard output, what
// toolc COMMAND -h says: the usage line, what the command does, and each
// flag with what it does; toolc help gives each command's line too; and a
// mistyped command gets the closest one suggested.
func TestHelpCommand(t *testing.T) {
	for _, c := range commands() {
		help, h := toolc(t, ".", "help", c.Name), toolc(t, ".", c.Name, "-h")
		if help.status != 0 || help.stdout != h.stderr {
			t.Errorf("toolc help %s (exit %d) says\n%s\nbut toolc %s -h says\n%s", c.Name, help.status, help.stdout, c.Name, h.stderr)
		}
		if c.Doc == "" || !strings.Contains(help.stdout, "\n"+c.Doc+"\n") {
			t.Errorf("toolc help %s does not say what it does (%q):\n%s", c.Name, c.Doc, help.stdout)
		}
	}
	r := toolc(t, ".", "help", "diff")
	wantMatch(t, r.stdout, `(?m)^  --against FILE\|GIT-REF\n    \tcompare with a lock file, a catalog file or a git revision`, "toolc help diff")
	r = toolc(t, ".", "help")
	for _, c := range commands() {
		if !strings.Contains(r.stdout, "\n\t    "+c.Doc+"\n") {
			t.Errorf("toolc help does not say what %s does:\n%s", c.Name, r.stdout)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{"chek", `toolc: unknown command "chek"; did you mean "check"?`},
		{"help exprot", `toolc help: unknown command "exprot"; did you mean "export"?`},
		{"frobnicate", `toolc: unknown command "frobnicate"` + "\n"},
	} {
		r := toolc(t, ".", strings.Fields(tc.args)...)
		wantStatus(t, r, exitUsage, tc.args)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("toolc %s: stderr does not hold %q:\n%s", tc.args, tc.want, r.stderr)
		}
	}
}

// TestHelpHidesToken: $TOOLC_TOKEN is the default of --token, and the
// help and the usage errors of serve and dev say "(default $TOOLC_TOKEN)",
// never the token (issue 20, item 10).
func TestHelpHidesToken(t *testing.T) {
	const token = "s3cret-token-value"
	for _, args := range [][]string{{"help", "serve"}, {"serve", "-h"}, {"dev", "-h"}, {"serve", "--nope"}, {"help", "dev"}} {
		r := toolcRun(t, runOpts{dir: ".", env: []string{"TOOLC_TOKEN=" + token}}, args...)
		if strings.Contains(r.stdout+r.stderr, token) {
			t.Errorf("toolc %s printed $TOOLC_TOKEN:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout+r.stderr, "(default $TOOLC_TOKEN)") {
			t.Errorf("toolc %s does not say where --token's default comes from:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
}
