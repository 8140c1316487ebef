package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMETour runs the README's five-minute tour as printed, in a new
// directory outside the checkout with the toolc under test on PATH, as
// go install puts it: toolc init, go mod tidy, toolc check, go test and
// toolc call; then toolc dev in the background, toolc health, the two
// curls and the kill. It runs in a network namespace of its own, so that
// port 8931 is free, and checks what the README says the commands print.
func TestREADMETour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new project's handler")
	}
	t.Parallel() // a namespace and a directory of its own
	d := docs(t)
	section := d.MustSection(t, "A five-minute tour")
	bs, err := d.SectionBlocks("A five-minute tour")
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for _, b := range bs {
		if b.Lang == "sh" {
			script.WriteString(shellScript(b.Text))
		}
	}
	if n := strings.Count(script.String(), "\necho '$ '"); n < 8 {
		t.Fatalf("the tour has %d commands in sh blocks; want toolc init through the call:\n%s", n+1, script.String())
	}
	// toolc dev ends on the kill; wait for it, so that its last lines
	// are in the output.
	script.WriteString("wait || true\n")

	// The answer the README quotes for the call over /v1/call.
	answer := `{"content":[{"type":"text","text":"{\"text\":\"hello\"}"}],"structuredContent":{"text":"hello"},"isError":false}`
	if !strings.Contains(section, "`"+answer+"`") {
		t.Fatalf("the tour no longer quotes the answer of its call, %s", answer)
	}

	env := append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"), "GOWORK=off")
	// The tour runs in a network namespace of its own (for port 8931),
	// so its go mod tidy has no network: what a reader's tidy fetches
	// must be in the module cache already, with the checksum database's
	// answers for it. On a fresh machine nothing else may have fetched
	// them yet, so the same two commands run once here, with the network.
	warm := exec.Command("sh", "-c", "toolc init my-tools >/dev/null && cd my-tools && go mod tidy")
	warm.Dir, warm.Env = t.TempDir(), env
	if out, err := warm.CombinedOutput(); err != nil {
		t.Logf("toolc init and go mod tidy outside the namespace: %v\n%s", err, out)
	}

	cmd := namespaced(t, false, script.String())
	cmd.Dir = t.TempDir()
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour, run as printed: %v\n%s", err, out)
	}
	for _, want := range []string{
		"created my-tools/my_tools.cue",
		"toolc check: 1 package, 1 tool: 0 errors, 0 warnings",
		"ok  \texample.com/my-tools",
		`"text": "hello hello"`, // toolc call, indented JSON
		`"status":"ok","tools":1`,
		answer,
		`"input_schema"`, // the Anthropic projection
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the tour did not print %q:\n%s", want, out)
		}
	}
}

// TestREADMESetup runs the first of the README's two set-up commands as
// printed, in the checkout and a network namespace of its own:
// go run ./cmd/toolc dev ./examples/... serves every example's tools on
// port 8931, which toolc health and /v1/tools then see. The second,
// scripts/test, is what CI runs (.ci/run execs it), so this test checks
// that rather than run the suite inside itself.
func TestREADMESetup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example's handler")
	}
	t.Parallel() // a namespace of its own, and toolc dev writes nothing into the checkout
	bs, err := docs(t).SectionBlocks("Set-up: two commands")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) == 0 || bs[0].Lang != "sh" {
		t.Fatal("the Set-up section does not start with an sh block")
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(bs[0].Text), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 || cmds[1] != "scripts/test" {
		t.Fatalf("the set-up commands are %q; want toolc dev, then scripts/test", cmds)
	}
	if ci := readFile(t, filepath.Join(repoRoot, ".ci", "run")); !strings.Contains(ci, "\nexec scripts/test\n") {
		t.Errorf(".ci/run does not run scripts/test, the README's second set-up command:\n%s", ci)
	}
	script := shellScript(cmds[0]+" &") +
		"toolc health --wait 10m\n" +
		// go run does not pass a signal on to the program it runs, as a
		// terminal's Ctrl-C reaches both: stop toolc itself.
		"pkill -TERM -P $!\nwait || true\n"
	cmd := namespaced(t, false, script)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the set-up's toolc dev, run as printed: %v\n%s", err, out)
	}
	for _, want := range []string{`"status":"ok","tools":`, "toolc dev: serving MCP on http://127.0.0.1:8931/mcp"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the set-up's toolc dev did not print %q:\n%s", want, out)
		}
	}
}
