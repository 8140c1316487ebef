package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
)

// slowBuild returns a GOFLAGS value under which every link of a handler
// waits 7 s, longer than the 5 s that mcp-go's server/discover probe waits
// for its answer, and then creates the file linked. The go command runs
// the tool through the script, which sleeps unless the go command is only
// asking the tool's version.
func slowBuild(t *testing.T) (goflags, linked string) {
	t.Helper()
	tmp := t.TempDir()
	script, linked := filepath.Join(tmp, "slowlink"), filepath.Join(tmp, "linked")
	body := "#!/bin/sh\ncase \"$1\" in */link) case \"$2\" in -V*) ;; *) sleep 7; : >" + linked + " ;; esac ;; esac\nexec \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return "GOFLAGS=-toolexec=" + script, linked
}

// TestStdioAnswersDuringFirstBuild: toolc dev --stdio and toolc serve
// --stdio answer the handshake while their first handler build runs, so
// that mcp-go, with its default options, connects to a server whose build
// takes longer than its 5 s discover probe; its tools/list waits for the
// load and gets the real tools, not the empty list of a server that has
// loaded nothing.
func TestStdioAnswersDuringFirstBuild(t *testing.T) {
	for _, command := range []string{"dev", "serve"} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			dir := newDevProject(t)
			stderr := &lockedBuffer{}
			goflags, linked := slowBuild(t)
			env := append(os.Environ(), "TOOLC_CACHE="+t.TempDir(), goflags)
			client := mcpgo.NewClient(mcpgotransport.NewStdioWithOptions(toolcBin, nil, []string{command, "--stdio", "./..."},
				mcpgotransport.WithCommandFunc(func(ctx context.Context, name string, _, args []string) (*exec.Cmd, error) {
					cmd := exec.Command(name, args...)
					cmd.Dir, cmd.Env, cmd.Stderr = dir, env, stderr
					return cmd, nil
				})))
			ctx, cancel := context.WithTimeout(context.Background(), devWait)
			defer cancel()
			if err := client.Start(ctx); err != nil {
				t.Fatalf("mcp-go start: %v", err)
			}
			t.Cleanup(func() { client.Close() })
			var init mcpgotypes.InitializeRequest
			init.Params.ClientInfo = mcpgotypes.Implementation{Name: "toolc-mcp-go", Version: "1"}
			if _, err := client.Initialize(ctx, init); err != nil {
				t.Fatalf("mcp-go initialize, during the build: %v\nstderr:\n%s", err, stderr)
			}
			if _, err := os.Stat(linked); err == nil {
				t.Fatalf("the handler was linked before mcp-go was initialized: the test proves nothing\nstderr:\n%s", stderr)
			}
			res, err := client.ListTools(ctx, mcpgotypes.ListToolsRequest{})
			if err != nil {
				t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if want := []string{"svc_echo", "svc_slow"}; !slices.Equal(names, want) {
				t.Errorf("tools/list = %v, want %v", names, want)
			}
		})
	}
}

// TestDevStdioFirstLoadFails: when the first load fails (here: patterns
// that match no contract), toolc dev --stdio exits 2, as it does over
// HTTP, rather than serve nothing; whatever it answered before, a
// tools/list is never answered with a list.
func TestDevStdioFirstLoadFails(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"README": "no contracts here"})
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolcBin, "dev", "--stdio", "./missing")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(stderr.String(), "toolc dev: ") {
		t.Errorf("toolc dev exited with %v, want status %d\nstderr:\n%s", err, exitUsage, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.ID == 2 && msg.Result != nil {
			t.Errorf("tools/list of a server that loaded nothing = %s, want an error", sc.Bytes())
		}
	}
}

// TestServeStdioBuildFails: when toolc serve --stdio's handler does not
// build, a tools/list held during the build is answered with an error,
// not left waiting, and toolc exits 1 as it did before it served first.
func TestServeStdioBuildFails(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	writeDevFile(t, filepath.Join(dir, "handler", "main.go"), "package main\n\nfunc main() { undefined() }\n")
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolcBin, "serve", "--stdio", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir())
	stdin, stdout, stderr := startStdio(t, cmd)
	stdin.Write([]byte(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"))
	// The second tools/list goes only after the build has failed: a client
	// that lists late (or lists again) must get the error too, not a closed
	// pipe. Before, toolc exited as the build failed, and a tools/list it
	// had not yet read got no answer, in this test one time in two on a
	// loaded machine.
	for !strings.Contains(stderr.String(), "undefined: undefined") {
		if ctx.Err() != nil {
			t.Fatalf("the build did not fail in time\nstderr:\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n"))
	listed := map[int][]byte{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for len(listed) < 2 && sc.Scan() {
		var msg struct {
			ID int `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && (msg.ID == 2 || msg.ID == 3) {
			listed[msg.ID] = slices.Clone(sc.Bytes())
		}
	}
	for _, id := range []int{2, 3} {
		if got := string(listed[id]); !strings.Contains(got, `"error"`) || !strings.Contains(got, "the server could not load its tools: building the handler of service") || !strings.Contains(got, "undefined") {
			t.Errorf("tools/list %d after a failed build = %s, want an error that says why\nstderr:\n%s", id, got, stderr)
		}
	}
	stdin.Close() // the client hangs up: toolc exits, with the build's status
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != exitFail {
		t.Errorf("toolc serve exited with %v, want status %d\nstderr:\n%s", err, exitFail, stderr)
	}
}
