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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/doctext"
)

// The MCP servers of the upstream tests come from npm, pinned, installed
// once by scripts/upstream-servers under .cache/upstream-servers.
var upstreamBin = sync.OnceValues(func() (string, error) {
	cmd := exec.Command(filepath.Join(repoRoot, "scripts", "upstream-servers"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
})

// npmServer returns the path of an npm server's executable, or skips the
// test when npm cannot install it (no network, no node).
func npmServer(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the upstream tests with npm servers need node and npm")
	}
	bin, err := upstreamBin()
	if err != nil {
		t.Skipf("scripts/upstream-servers could not install the npm servers (is the npm registry reachable?): %v", err)
	}
	return filepath.Join(bin, name)
}

// TestUpstreamNPMServers imports three reference servers from npm, checks
// the contracts, and calls through them with toolc call and through toolc
// serve with go-sdk's client.
func TestUpstreamNPMServers(t *testing.T) {
	root := t.TempDir()
	files := filepath.Join(root, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(files, "a.txt"), []byte("hello from a file\n"), 0o644)
	memory := filepath.Join(root, "memory.jsonl")
	env := append(os.Environ(), "MEMORY_FILE_PATH="+memory, "TOOLC_CACHE="+t.TempDir())
	run := func(t *testing.T, args ...string) result {
		t.Helper()
		cmd := exec.Command(toolcBin, args...)
		cmd.Dir, cmd.Env = root, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{status, stdout.String(), stderr.String()}
	}
	for _, tt := range []struct {
		dir, bin string
		args     []string
		tools    int
		call     []string // tool, arguments
		want     string
	}{
		{"everything", "mcp-server-everything", nil, 16, []string{"echo", `{"message":"hi"}`}, "Echo: hi"},
		{"filesystem", "mcp-server-filesystem", []string{files}, 14, []string{"read_text_file", `{"path":"` + filepath.Join(files, "a.txt") + `"}`}, "hello from a file"},
		{"memory", "mcp-server-memory", []string{"--env", "MEMORY_FILE_PATH"}, 9, []string{"create_entities", `{"entities":[{"name":"toolc","entityType":"project","observations":["compiles contracts"]}]}`}, `"name": "toolc"`},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			bin := npmServer(t, tt.bin)
			args := []string{"import", "mcp", "--out", tt.dir}
			if tt.dir == "memory" {
				args = append(args, tt.args...)
				args = append(args, "--", bin)
			} else {
				args = append(append(args, "--", bin), tt.args...)
			}
			r := run(t, args...)
			if r.status != 0 || !strings.Contains(r.stdout, "wrote ") {
				t.Fatalf("import: status %d\n%s\n%s", r.status, r.stdout, r.stderr)
			}
			if r := run(t, "check", "./"+tt.dir); r.status != 0 || !strings.Contains(r.stderr, "0 errors") {
				t.Fatalf("check: status %d\n%s", r.status, r.stderr)
			}
			r = run(t, "call", "./"+tt.dir, tt.call[0], tt.call[1])
			if r.status != 0 || !strings.Contains(r.stdout, tt.want) {
				t.Fatalf("call %s: status %d\n%s\n%s", tt.call[0], r.status, r.stdout, r.stderr)
			}
			// Unknown arguments never reach the server.
			r = run(t, "call", "./"+tt.dir, tt.call[0], strings.Replace(tt.call[1], "{", `{"notAField":1,`, 1))
			if r.status != 1 || !strings.Contains(r.stdout, `unknown field \"notAField\"`) {
				t.Errorf("call with an unknown argument: status %d\n%s", r.status, r.stdout)
			}
			if r := run(t, "diff", "--upstream", "./"+tt.dir); r.status != 0 {
				t.Errorf("diff --upstream against the server just imported: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			if r := run(t, "import", "mcp", "--out", tt.dir, "--", bin); tt.dir == "everything" && (r.status != 0 || !strings.Contains(r.stdout, "the server matches")) {
				t.Errorf("import again: status %d\n%s", r.status, r.stdout)
			}
		})
	}

	// Served: go-sdk's client calls through toolc serve; a description
	// edited in the contract withdraws the tool, and diff --upstream says
	// why.
	t.Run("serve", func(t *testing.T) {
		npmServer(t, "mcp-server-everything")
		contract := filepath.Join(root, "everything", "upstream.cue")
		src, err := os.ReadFile(contract)
		if err != nil {
			t.Skip("the everything import did not run")
		}
		edited := strings.Replace(string(src), `"Echoes back the input string"`, `"Echoes back the input string, reviewed"`, 1)
		if edited == string(src) {
			t.Fatal("the echo description is not in the contract")
		}
		os.WriteFile(contract, []byte(edited), 0o644)
		defer os.WriteFile(contract, src, 0o644)
		cmd := exec.Command(toolcBin, "serve", "--http", "127.0.0.1:0", "./everything")
		cmd.Dir, cmd.Env = root, env
		url, stderr := startServeCmd(t, cmd)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// The client answers the questions server-everything asks in
		// the middle of a call, which reach it through toolc.
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "sampled through toolc"}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		})
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		list, err := session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		// 16 with the three that ask toolc's client, which toolc offers
		// elicitation, sampling and roots.
		if len(names) != 15 || strings.Contains(strings.Join(names, " "), "everything_echo") {
			t.Errorf("served tools = %v, want the 15 besides the withdrawn echo", names)
		}
		for _, ask := range []struct{ tool, args, want string }{
			{"everything_trigger-sampling-request", `{"prompt":"hi"}`, "sampled through toolc"},
			{"everything_trigger-elicitation-request", `{}`, "declined"},
		} {
			var args map[string]any
			json.Unmarshal([]byte(ask.args), &args)
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: ask.tool, Arguments: args})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("%s: %v %+v", ask.tool, err, res)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, ask.want) {
				t.Errorf("%s = %q, want the client's answer (%q)", ask.tool, text, ask.want)
			}
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "everything_get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
		if err != nil || res.IsError {
			t.Fatalf("get-sum: %v %+v", err, res)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "5") {
			t.Errorf("get-sum = %q", text)
		}
		if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "everything_echo", Arguments: map[string]any{"message": "x"}}); err == nil {
			t.Error("the withdrawn echo was called")
		}
		if !strings.Contains(stderr.String(), "upstream tool withdrawn") || !strings.Contains(stderr.String(), "tool=echo") {
			t.Errorf("no log line names the withdrawn tool:\n%s", stderr.String())
		}
		// /metrics names the tool and the difference.
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{
			`toolc_upstream_withdrawn{difference="description-changed",service="everything",tool="echo"} 1`,
			`toolc_upstream_withdrawals_total{difference="description-changed",service="everything",tool="echo"} 1`,
		} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		r := run(t, "diff", "--upstream", "./everything")
		if r.status != 1 || !strings.Contains(r.stdout, "[description-changed]") {
			t.Errorf("diff --upstream: status %d\n%s%s", r.status, r.stdout, r.stderr)
		}
		var out []map[string]any
		r = run(t, "diff", "--upstream", "--format", "json", "./everything")
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out) != 1 || out[0]["tool"] != "echo" {
			t.Errorf("diff --upstream --format json = %s (%v)", r.stdout, err)
		}

		// The TypeScript SDK's client calls through toolc serve over
		// HTTP and through toolc serve --stdio, and, for comparison,
		// server-everything itself over stdio.
		t.Run("typescript client", func(t *testing.T) {
			timed := 20
			if v := os.Getenv("TOOLC_TS_TIMED"); v != "" {
				fmt.Sscan(v, &timed)
			}
			bin := npmServer(t, "mcp-server-everything")
			for _, tc := range []struct {
				name   string
				prefix string
				target []string
			}{
				{"through toolc serve over HTTP", "everything_", []string{url + "/mcp"}},
				{"through toolc serve --stdio", "everything_", []string{toolcBin, "serve", "--stdio", "./everything"}},
				{"server-everything directly over stdio", "", []string{bin}},
			} {
				steps := tsUpstream(t, root, env, timed, [][2]any{
					{tc.prefix + "get-sum", map[string]any{"a": 2, "b": 3}},
					{tc.prefix + "trigger-sampling-request", map[string]any{"prompt": "hi"}},
				}, tc.target...)
				if len(steps) != 3 || !strings.Contains(steps[0]["text"].(string), "5") || steps[0]["isError"] != false ||
					!strings.Contains(steps[1]["text"].(string), "sampled by the TypeScript client") || steps[1]["isError"] != false || steps[2]["event"] != "timed" {
					t.Fatalf("%s: the TypeScript client's steps = %v", tc.name, steps)
				}
				t.Logf("%s: get-sum p50 %.0f µs, p90 %.0f µs over %v calls", tc.name, steps[2]["p50"], steps[2]["p90"], steps[2]["n"])
			}
		})
	})
}

// tsUpstream runs testdata/tsupstream.mjs against target (a URL, or a
// command that speaks MCP on stdio), with the calls and timed calls of
// the first, and returns its steps.
func tsUpstream(t *testing.T, dir string, env []string, timed int, calls [][2]any, target ...string) []map[string]any {
	t.Helper()
	node, sdk := tsSDK(t)
	script, err := filepath.Abs("testdata/tsupstream.mjs")
	if err != nil {
		t.Fatal(err)
	}
	callsJSON, _ := json.Marshal(calls)
	cmd := exec.Command(node, append([]string{script}, target...)...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(env), "TOOLC_TS_SDK="+sdk, "TOOLC_TS_CALLS="+string(callsJSON), fmt.Sprintf("TOOLC_TS_TIMED=%d", timed))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		err = <-done
	}
	var steps []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var step map[string]any
		if json.Unmarshal([]byte(line), &step) == nil {
			steps = append(steps, step)
		}
	}
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return steps
}

// TestREADMEUpstream runs the README's commands that put
// server-everything under contract, as printed, with npx from npm.
func TestREADMEUpstream(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	bs, err := doctext.Read(t).SectionBlocks("Putting an existing MCP server under contract")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) == 0 || bs[0].Lang != "sh" {
		t.Fatal("the section does not start with an sh block")
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-e", "-c", shellScript(bs[0].Text))
	cmd.Dir = dir
	// npx installs the server into a cache of the repository's, beside
	// the servers scripts/upstream-servers installed, so that the test
	// fetches it once.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"npm_config_cache="+filepath.Join(filepath.Dir(filepath.Dir(bin)), "..", "npx-cache"), "TOOLC_CACHE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands, run as printed: %v\n%s", err, out)
	}
	for _, want := range []string{"imported 16 tools: 15 unchanged, 1 with a change, 0 left out", "toolc check: 1 package, 16 tools: 0 errors", `"text": "Echo: hi"`, "the upstream servers match their contracts"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's commands did not print %q:\n%s", want, out)
		}
	}
}
