package main

import (
	"os"
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

	cmd := namespaced(t, false, script.String())
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"), "GOWORK=off")
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
