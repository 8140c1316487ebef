package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
const initHandler = `package main

//go:generate toolc gen go .

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
