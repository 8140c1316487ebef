package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// initProject runs toolc init, then makes the project build against this
// checkout (a replace directive, and go.sum complete) and gives it the
// handler that the README's workflow uses: the generated Tools interface,
// implemented by one type, and served by the generated Serve.
func initProject(t *testing.T) string {
	t.Helper()
	parent := t.TempDir()
	if r := toolc(t, parent, "init", "proj"); r.status != 0 {
		t.Fatalf("toolc init: %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "proj")
	writeDevFile(t, filepath.Join(dir, "go.mod"), "module example.com/proj\n\ngo 1.26\n\nrequire github.com/toolc/toolc v0.0.0\n\nreplace github.com/toolc/toolc => "+root+"\n")
	writeDevFile(t, filepath.Join(dir, "go.sum"), readDevFile(t, filepath.Join(root, "go.sum")))
	writeDevFile(t, filepath.Join(dir, "main.go"), initHandler)
	gen(t, dir)
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return dir
}

func gen(t *testing.T, dir string) {
	t.Helper()
	if r := toolc(t, dir, "gen", "go", "."); r.status != 0 {
		t.Fatalf("toolc gen go: %d\n%s", r.status, r.stderr)
	}
}

// initHandler implements the scaffold's contract; the tests add methods
// to it with implement.
// (The directive is a separate string so that go generate ./... in this
// repository does not run it.)
const initHandler = `package main

` + "//go:generate toolc gen go .\n" + `
import (
	"context"
	"strings"
)

func main() { Serve(impl{}) }

type impl struct{}

func (impl) Echo(_ context.Context, req EchoRequest) (*EchoResponse, error) {
	words := make([]string, req.Repeat)
	for i := range words {
		words[i] = req.Message
	}
	return &EchoResponse{Text: strings.Join(words, " ")}, nil
}
`

// addTool adds a tool like echo, named name, to the scaffold's contract.
func addTool(t *testing.T, s *devServer, contract, name string) {
	t.Helper()
	src := readDevFile(t, contract)
	s.write(contract, mustReplace(t, src, "\ttools: echo: {", "\ttools: "+name+`: {
		description: "Say a message back in another voice"
		request: fields: message: {type: "string", description: "Text to say"}
		response: fields: text: {type: "string", description: "What was said"}
	}
	tools: echo: {`))
}

// implement adds the method of a tool added by addTool to the handler.
func implement(t *testing.T, s *devServer, handler, method, transform string) {
	t.Helper()
	s.write(handler, readDevFile(t, handler)+"\nfunc (impl) "+method+"(_ context.Context, req "+method+"Request) (*"+method+"Response, error) {\n\treturn &"+method+"Response{Text: "+transform+"(req.Message)}, nil\n}\n")
}

// v1Call calls a tool through the function-call API, as a non-MCP client
// would, and returns the result's text or the error.
func v1Call(t *testing.T, s *devServer, tool, args string) (string, bool) {
	t.Helper()
	base := strings.TrimSuffix(s.url, "/mcp")
	resp, err := http.Post(base+"/v1/call", "application/json", bytes.NewBufferString(`{"name":"`+tool+`","arguments":`+args+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &res) != nil || len(res.Content) == 0 {
		return resp.Status + " " + string(body), false
	}
	return res.Content[0].Text, !res.IsError
}

// TestDevToolAddedBeforeItsHandler drives the workflow the README teaches,
// in a toolc init project under toolc dev: add a tool to the contract,
// run toolc gen go, implement the method. The tool goes live whichever of
// the handler's two edits comes last, though the contract was saved first
// and a reload in between failed.
func TestDevToolAddedBeforeItsHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	dir := initProject(t)
	contract, handler := filepath.Join(dir, "proj.cue"), filepath.Join(dir, "main.go")
	s := startDev(t, dir)
	s.expect(`reloaded in \S+: tools \+echo;`)
	if got, ok := v1Call(t, s, "echo", `{"message":"hi","repeat":2}`); !ok || got != `{"text":"hi hi"}` {
		t.Fatalf("echo = %s, %v", got, ok)
	}

	// The method is implemented last.
	{
		addTool(t, s, contract, "shout")
		s.expect(`lacks tools shout .*still serving the last good state`)
		s.step()
		gen(t, dir) // tools_gen.go now wants a Shout method that impl lacks
		s.expect(`missing method Shout(.|\n)*still serving the last good state`)
		implement(t, s, handler, "Shout", "strings.ToUpper")
		s.expect(`reloaded in \S+: tools \+shout; handlers of proj rebuilt;`)
		if got, ok := v1Call(t, s, "shout", `{"message":"hi"}`); !ok || got != `{"text":"HI"}` {
			t.Errorf("/v1/call shout = %s, %v; want {\"text\":\"HI\"}", got, ok)
		}
		s.wantCall("proj_shout", map[string]any{"message": "mcp"}, `{"text":"MCP"}`)
	}
	// The code is generated last.
	{
		addTool(t, s, contract, "whisper")
		s.expect(`lacks tools whisper .*still serving the last good state`)
		implement(t, s, handler, "Whisper", "strings.ToLower") // WhisperRequest is not generated yet
		s.expect(`undefined: WhisperRequest(.|\n)*still serving the last good state`)
		s.step()
		gen(t, dir)
		s.expect(`reloaded in \S+: tools \+whisper; handlers of proj rebuilt;`)
		if got, ok := v1Call(t, s, "whisper", `{"message":"HI"}`); !ok || got != `{"text":"hi"}` {
			t.Errorf("/v1/call whisper = %s, %v; want {\"text\":\"hi\"}", got, ok)
		}
	}
}

// TestDevHandlerBurst saves the handler 40 times, 100 ms apart, as an
// editor saving on every keystroke or a formatter on a loop would. The
// saves during a build merge into one rebuild after it, so that once the
// burst ends, at most the build in flight and one more run, and the final
// code is served. A save that leaves the build inputs as they are (a test
// file of the handler package) rebuilds nothing.
//
// toolc dev prints a build only when it ends, so no quiet spell on its
// stderr says that the burst is over: a build may run for longer than any
// spell on a loaded machine. What does say so is a reload that found the
// handler's inputs to be those of the running build: every reload after
// that one finds the same, so the builds counted up to it are all the
// burst caused. Saves of a test file of the handler's package (which is
// no build input) bring such reloads about.
func TestDevHandlerBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	s := startDev(t, newDevProject(t))
	handler := readDevFile(t, s.handler)
	hi := map[string]string{"message": "hi"}
	s.wantCall("svc_echo", hi, "v1:hi")

	s.step()
	for i := 2; i <= 40; i++ {
		writeDevFile(t, s.handler, mustReplace(t, handler, devVersion, fmt.Sprintf("const version = \"v%d\"", i)))
		time.Sleep(100 * time.Millisecond) // the pace of the saves, not a wait for toolc
	}
	during := s.stderr.String()[s.mark:]
	s.mark = len(s.stderr.String())
	deadline := time.Now().Add(devWait)
	for {
		if got, _ := s.call("svc_echo", hi); got == "v40:hi" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("v40 was never served:\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// v40 is served, but the build that serves it may have read its
	// inputs before the last save, and a reload still to come then builds
	// again. Save a test file until a reload says that nothing is to be
	// built: from then on, every reload says so.
	unchanged := regexp.MustCompile(`the handler of svc is unchanged: the build inputs are those of the running build; nothing rebuilt\n`)
	testFile := filepath.Join(filepath.Dir(s.handler), "main_test.go")
	after := ""
	for i := 0; ; i++ {
		seen := len(regexp.MustCompile(`toolc dev: `).FindAllString(s.stderr.String()[s.mark:], -1))
		writeDevFile(t, testFile, fmt.Sprintf("package main\n\n// save %d\n", i))
		// Wait for the next reload to report, whichever batch it was.
		next := time.Now().Add(devWait)
		for len(regexp.MustCompile(`toolc dev: `).FindAllString(s.stderr.String()[s.mark:], -1)) == seen {
			if time.Now().After(next) {
				t.Fatalf("toolc dev reported no reload after a save of %s:\n%s", testFile, s.stderr)
			}
			time.Sleep(20 * time.Millisecond) // no event says a line was written
		}
		if after = s.stderr.String()[s.mark:]; unchanged.MatchString(after) {
			break
		}
	}
	builds := regexp.MustCompile(`build \S+ \(svc\)`)
	t.Logf("%d builds during the 4 s of saves, %d after", len(builds.FindAllString(during, -1)), len(builds.FindAllString(after, -1)))
	if n := len(builds.FindAllString(after, -1)); n > 2 {
		t.Errorf("%d builds after the last save; want at most 2 (the one in flight, and one with the final code):\n%s", n, after)
	}
	s.wantCall("svc_echo", hi, "v40:hi")

	s.write(filepath.Join(filepath.Dir(s.handler), "other_test.go"), "package main\n")
	if out := s.expect(unchanged.String()); builds.MatchString(out) {
		t.Errorf("a new test file rebuilt the handler:\n%s", out)
	}
	s.wantCall("svc_echo", hi, "v40:hi")
}

// TestDevSymlinkedDirectory serves contracts through a symlinked
// directory, named by a pattern: toolc dev follows the link as toolc check
// does, and an edit through either name reloads.
func TestDevSymlinkedDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	dir := newDevProject(t)
	if err := os.Symlink("api", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, pat := range []string{"./link", "./link/..."} {
		if r := toolc(t, dir, "check", pat); r.status != 0 || !strings.Contains(r.stderr+r.stdout, "1 package") {
			t.Errorf("toolc check %s: %d\n%s%s", pat, r.status, r.stdout, r.stderr)
		}
	}
	s := startDev(t, dir, "./link/...")
	s.wantTools("svc_echo", "svc_slow")
	contract := readDevFile(t, s.contract)
	withShout := mustReplace(t, contract, devSlowTool, "\t\t"+devShoutTool+devSlowTool)
	s.write(filepath.Join(dir, "link", "svc.cue"), withShout)
	s.expect(`reloaded in \S+: tools \+shout; compile`)
	s.wantTools("svc_echo", "svc_shout", "svc_slow")
	s.write(filepath.Join(dir, "api", "svc.cue"), contract)
	s.expect(`reloaded in \S+: tools -shout; compile`)
	s.wantTools("svc_echo", "svc_slow")
}

// TestDevRootMovedAwayAndBack moves the project away from under toolc dev
// and back: reloads resume, and the handler, unchanged, is not rebuilt.
func TestDevRootMovedAwayAndBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	dir := newDevProject(t)
	s := startDev(t, dir)
	s.step()
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	s.expect(`still serving the last good contracts`)
	s.step()
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	if out := s.expect(`reloaded in \S+: tools unchanged; compile \S+, swap`); strings.Contains(out, "build") {
		t.Errorf("the handler was rebuilt, though it did not change:\n%s", out)
	}
	contract := readDevFile(t, s.contract)
	s.write(s.contract, mustReplace(t, contract, devSlowTool, "\t\t"+devShoutTool+devSlowTool))
	s.expect(`reloaded in \S+: tools \+shout; compile`)
	s.wantTools("svc_echo", "svc_shout", "svc_slow")
}

// Fields that draw provider-limit warnings: Gemini cannot express an enum
// on an integer, nor uniqueItems.
const (
	levelField = `level: {type: "integer", description: "How loud", required: false, enum: [1, 2, 3]}`
	tagsField  = `tags: {type: "array", items: "string", description: "Tags", required: false, uniqueItems: true}`
)

// warningLines are the lines of out that print a warning in full.
func warningLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ": warning: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestStartupWarnings checks what toolc lock, serve --stdio and dev say
// about warnings when they start: one line with the count and a pointer to
// toolc check, which still prints them all. toolc dev then prints a
// warning in full once, when an edit brings it in.
func TestStartupWarnings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds handler plugins")
	}
	dir := newDevProject(t)
	contract := filepath.Join(dir, "api", "svc.cue")
	src := mustReplace(t, readDevFile(t, contract), devMessageField, devMessageField+"\n\t\t\t\t"+levelField)
	writeDevFile(t, contract, src)
	const summary = ": 1 warning [provider-limit]; run toolc check for details\n"

	check := toolc(t, dir, "check")
	if n := len(warningLines(check.stdout)); n != 1 {
		t.Errorf("toolc check printed %d warnings, want 1:\n%s", n, check.stdout)
	}
	lock := toolc(t, dir, "lock")
	if lock.status != 0 || !strings.Contains(lock.stderr, "toolc lock"+summary) || len(warningLines(lock.stderr)) > 0 {
		t.Errorf("toolc lock: %d\n%s", lock.status, lock.stderr)
	}

	cmd := exec.Command(toolcBin, "serve", "--stdio")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to toolc serve --stdio: %v\n%s", err, stderr)
	}
	if _, err := session.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
	session.Close()
	if out := stderr.String(); !strings.Contains(out, "toolc serve"+summary) || len(warningLines(out)) > 0 {
		t.Errorf("toolc serve --stdio's stderr:\n%s", out)
	}

	s := startDev(t, dir)
	if out := s.stderr.String(); !strings.Contains(out, "toolc dev"+summary) || len(warningLines(out)) > 0 {
		t.Errorf("toolc dev's start:\n%s", out)
	}
	// A new warning is printed in full, the old one not again.
	src = mustReplace(t, src, levelField, levelField+"\n\t\t\t\t"+tagsField)
	s.write(contract, src)
	out := s.expect(`reloaded in \S+: tools ~echo;`)
	if w := warningLines(out); len(w) != 1 || !strings.Contains(w[0], "uniqueItems") {
		t.Errorf("after adding a field with a new warning, toolc dev printed:\n%s", out)
	}
	// An edit that brings no new warning prints none.
	s.write(contract, mustReplace(t, src, `"Echo a message back"`, `"Echo a message back, again"`))
	if out := s.expect(`reloaded in \S+: tools ~echo;`); len(warningLines(out)) > 0 {
		t.Errorf("an edit with no new warning printed:\n%s", out)
	}
}

// TestHandlerMustBeMain: a contract beside a Go package that is not main
// draws a handler warning at the contract from check and build (such a
// package can serve the tools in process), and toolc call, which runs the
// handler as a plugin, fails with the same explanation, not "permission
// denied".
func TestHandlerMustBeMain(t *testing.T) {
	dir := initProject(t)
	if r := toolc(t, dir, "build", "-o", "cat.json"); r.status != 0 {
		t.Fatalf("toolc build: %d\n%s", r.status, r.stderr)
	}
	handler := filepath.Join(dir, "main.go")
	// Every Go file of the directory, the tests toolc init writes too:
	// one file left in package main would make the directory two
	// packages, which go list reports as an error, not as package proj.
	goFiles, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(goFiles) < 3 {
		t.Fatalf("toolc init wrote Go files %v (%v), want main.go, tools_gen.go and their tests", goFiles, err)
	}
	for _, path := range goFiles {
		writeDevFile(t, path, strings.Replace(readDevFile(t, path), "package main", "package proj", 1))
	}
	writeDevFile(t, handler, strings.Replace(readDevFile(t, handler), "func main() { Serve(impl{}) }", "", 1))
	check := toolc(t, dir, "check")
	if check.status != 0 || !regexp.MustCompile(`(?m)^proj\.cue:\d+:\d+: warning: the contract's directory holds Go package proj, .*a handler must be a main package.* \[handler\]$`).MatchString(check.stdout) {
		t.Errorf("toolc check: exit %d, want 0 and a handler warning at the contract:\n%s%s", check.status, check.stdout, check.stderr)
	}
	if r := toolc(t, dir, "build"); r.status != 0 || !strings.Contains(r.stderr, "toolc build: 1 warning [handler]; run toolc check for details") {
		t.Errorf("toolc build: exit %d, want 0 and the warning summed up:\n%s", r.status, r.stderr)
	}
	cmd := exec.Command(toolcBin, "call", "--catalog", "cat.json", "echo", `{"message":"hi"}`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "holds Go package proj, not a main package: a handler must be package main") || strings.Contains(string(out), "permission denied") {
		t.Errorf("toolc call --catalog on a non-main handler: %v\n%s", err, out)
	}
}
