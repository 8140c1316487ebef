package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestService builds the service with go build, runs it as a user would,
// and talks to it with the go-sdk MCP client and over /v1/call; then
// SIGTERM must stop it cleanly.
func TestService(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "embed")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = os.Environ()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	var log strings.Builder
	addr := ""
	for addr == "" && lines.Scan() {
		fmt.Fprintln(&log, lines.Text())
		if m := regexp.MustCompile(`MCP on http://(\S+)/mcp`).FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("the service did not say where it listens:\n%s", &log)
	}
	rest := make(chan string, 1) // the rest of stderr, once the service exits
	go func() {
		var b strings.Builder
		for lines.Scan() {
			fmt.Fprintln(&b, lines.Text())
		}
		rest <- b.String()
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "embed-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "notes_add_note,notes_find_notes" {
		t.Errorf("tools/list = %v", names)
	}
	call := func(tool string, args any) map[string]any {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if res.IsError {
			t.Fatalf("%s: tool error %v", tool, res.Content)
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out
	}
	if got := call("notes_add_note", map[string]any{"title": "Buy milk"}); got["id"] != 1.0 {
		t.Errorf("add_note = %v, want id 1", got)
	}
	call("notes_add_note", map[string]any{"title": "Call Ana", "text": "About the MILK delivery"})
	call("notes_add_note", map[string]any{"title": "Unrelated"})
	got := call("notes_find_notes", map[string]any{"query": "milk"})
	if fmt.Sprint(got["ids"], got["titles"]) != "[2 1] [Call Ana Buy milk]" {
		t.Errorf("find_notes milk = %v, want notes 2 and 1, newest first", got)
	}
	// The runtime checks arguments against the contract before a handler
	// runs: an empty title is a tool error that names the field.
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "notes_add_note", Arguments: map[string]any{"title": ""}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), "title") {
		t.Errorf("add_note with an empty title = %v, %v; want a tool error about title", res, err)
	}

	// The function-call API serves the same runtime.
	resp, err := http.Post("http://"+addr+"/v1/call", "application/json",
		strings.NewReader(`{"name":"find_notes","arguments":"{\"query\":\"call\"}"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		StructuredContent struct {
			IDs []int `json:"ids"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || body.IsError || fmt.Sprint(body.StructuredContent.IDs) != "[2]" {
		t.Errorf("/v1/call find_notes = %d %+v %v", resp.StatusCode, body, err)
	}

	// SIGTERM, with the session still open: the service shuts down and
	// exits 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Its stderr ends when it exits; read all of it before Wait closes it.
	select {
	case out := <-rest:
		if err := cmd.Wait(); err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, out)
		}
		if !strings.Contains(out, "shutting down") {
			t.Errorf("the service did not say it shut down:\n%s", out)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the service did not stop within 15s of SIGTERM")
	}
	session.Close()
}

// TestServedByToolc runs the same tools as the notes service's handler
// plugin, ./notes/plugin, as toolc dev and toolc serve start it.
func TestServedByToolc(t *testing.T) {
	cmd := exec.Command("go", "run", "./cmd/toolc", "call", "./examples/embed/notes", "add_note", `{"title":"from toolc"}`)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolc call ./examples/embed/notes add_note: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"id":1`) && !strings.Contains(string(out), `"id": 1`) {
		t.Errorf("toolc call add_note = %s, want id 1", out)
	}
}
