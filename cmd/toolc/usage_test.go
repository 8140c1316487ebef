package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
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
		r := toolc(t, ".", c.name, "-h")
		if r.status != 0 {
			t.Errorf("toolc %s -h: exit %d\n%s", c.name, r.status, r.stderr)
			continue
		}
		first, defaults, _ := strings.Cut(r.stderr, "\n")
		usage, ok := strings.CutPrefix(first, "usage: ")
		if !ok {
			t.Errorf("toolc %s -h does not begin with a usage line:\n%s", c.name, r.stderr)
			continue
		}
		words := strings.FieldsFunc(usage, func(r rune) bool { return strings.ContainsRune(" []|", r) })
		for _, m := range flagLine.FindAllStringSubmatch(defaults, -1) {
			if name := m[1]; !slices.Contains(words, dashes(name)+name) {
				t.Errorf("toolc %s: usage %q does not name %s%s", c.name, usage, dashes(name), name)
			}
		}
		for _, w := range words {
			if strings.HasPrefix(w, "-") && !regexp.MustCompile(`(?m)^  --?`+regexp.QuoteMeta(strings.TrimLeft(w, "-"))+`\b`).MatchString(defaults) {
				t.Errorf("toolc %s: usage %q names %s, which is not one of its flags", c.name, usage, w)
			}
		}
		if listed[c.name] != usage {
			t.Errorf("toolc help lists\n\t%s\nbut toolc %s -h says\n\t%s", listed[c.name], c.name, usage)
		}
		for _, s := range readme[c.name] {
			if s != usage {
				t.Errorf("README.md has the synopsis\n\t%s\nbut toolc %s -h says\n\t%s", s, c.name, usage)
			}
		}
		if len(readme[c.name]) == 0 {
			t.Errorf("README.md has no synopsis of toolc %s", c.name)
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
	for _, l := range strings.Split(readFile(t, "../../README.md"), "\n") {
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
	return slices.ContainsFunc(commands(), func(c command) bool { return c.name == name })
}

// TestFlagListSpellsUsage checks that the flag list under each usage line
// spells every flag as the line does, "--catalog FILE" and not
// "-catalog string", so that a user reading either reads the same.
func TestFlagListSpellsUsage(t *testing.T) {
	entry := regexp.MustCompile(`(?m)^  (-\S+)( \S+)?$`)
	for _, c := range commands() {
		r := toolc(t, ".", c.name, "-h")
		first, defaults, _ := strings.Cut(r.stderr, "\n")
		usage := strings.TrimPrefix(first, "usage: ")
		entries := entry.FindAllStringSubmatch(defaults, -1)
		if strings.Contains(usage, "-") && len(entries) == 0 {
			t.Errorf("toolc %s -h lists no flags:\n%s", c.name, r.stderr)
		}
		for _, m := range entries {
			if !strings.Contains(usage, m[1]+m[2]) {
				t.Errorf("toolc %s -h lists %q, which its usage line %q does not spell so", c.name, m[1]+m[2], usage)
			}
		}
	}
}
