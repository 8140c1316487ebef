package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
)

// The serve and call tests run toolc on the runtime's faulty test service,
// runtime/testdata/faulty: a contract and its handler plugin. They run
// from the repository root, as the patterns are relative to the working
// directory.

const faultyPattern = "./runtime/testdata/faulty"

// toolcCmd is toolc run from the repository root, with a plugin cache of
// its own that the test removes.
func toolcCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(toolcBin, args...)
	cmd.Dir = repoRoot
	// The task store of toolc serve goes in the state directory.
	cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	return cmd
}

// faultyMCPTools is the MCP projection of the faulty service.
func faultyMCPTools(t testing.TB) []catalog.MCPTool {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{Dir: repoRoot}, faultyPattern)
	if err != nil || res.HasErrors() {
		t.Fatalf("compiling the faulty contract: %v %v", err, res.Diagnostics)
	}
	return res.Catalog.MCPTools()
}

func mcpToolName(t testing.TB, tools []catalog.MCPTool, suffix string) string {
	t.Helper()
	for _, tl := range tools {
		if strings.HasSuffix(tl.Name, "_"+suffix) || tl.Name == suffix {
			return tl.Name
		}
	}
	t.Fatalf("no MCP tool for %s", suffix)
	return ""
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// lockedBuffer collects toolc's stderr while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// revisions are the MCP revisions the tests speak to toolc: the newest,
// without sessions, and the last with them.
var revisions = []string{"2026-07-28", "2025-11-25"}

// exerciseMCP lists and calls the faulty tools through a session of the
// revision.
func exerciseMCP(t *testing.T, session *mcp.ClientSession, logs func() []string, revision string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := faultyMCPTools(t)
	if got := session.InitializeResult().ProtocolVersion; got != revision {
		t.Errorf("the session speaks MCP %s, want %s", got, revision)
	}

	list, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got, wantNames []string
	for _, tl := range list.Tools {
		got = append(got, tl.Name)
	}
	for _, tl := range want {
		wantNames = append(wantNames, tl.Name)
	}
	slices.Sort(got)
	slices.Sort(wantNames)
	if !slices.Equal(got, wantNames) {
		t.Fatalf("tools/list names = %q, want %q", got, wantNames)
	}
	for _, tl := range list.Tools {
		for _, w := range want {
			if w.Name != tl.Name {
				continue
			}
			var g, ws any
			json.Unmarshal(mustMarshal(tl.InputSchema), &g)
			json.Unmarshal(mustMarshal(w.InputSchema), &ws)
			if !reflect.DeepEqual(g, ws) || tl.Description != w.Description {
				t.Errorf("tool %s differs from the projection: %+v", tl.Name, tl)
			}
		}
	}

	echo := mcpToolName(t, want, "echo")
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "hi", "times": 2}})
	if err != nil || res.IsError {
		t.Fatalf("echo = %v, %v", res, err)
	}
	if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"echo":"hihi","times":2}` {
		t.Errorf("echo structuredContent = %s", got)
	}

	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "hi", "times": 0}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), `field "times" must be at least 1, not 0`) {
		t.Errorf("echo with times 0 = %v (%q), %v; want isError", res, resultText(res), err)
	}

	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "no_such_tool") {
		t.Errorf("unknown tool: %v, want a JSON-RPC error", err)
	}

	// A panic's stack goes to toolc's stderr, not into the MCP stream on
	// stdout: the session goes on.
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: mcpToolName(t, want, "panic")})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "deliberate panic") {
		t.Errorf("panic = %v, %v", res, err)
	}

	// Log messages, asked for with logging/setLevel for the session, or,
	// from MCP 2026-07-28 on, in the request's _meta.
	if revision < "2026-07-28" {
		if err := session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	res, err = session.CallTool(ctx, &mcp.CallToolParams{
		Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}, Name: mcpToolName(t, want, "progress"), Arguments: map[string]any{"steps": 2},
	})
	if err != nil || res.IsError || resultText(res) != "did 2 steps" {
		t.Errorf("progress = %v, %v", res, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(logs()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := logs(); !slices.Equal(got, []string{"log 1", "log 2"}) {
		t.Errorf("log messages = %q", got)
	}

	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "after"}})
	if err != nil || res.IsError {
		t.Errorf("echo at the end = %v, %v", res, err)
	}
}

func mustMarshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// logCollector gathers the MCP log messages a client receives.
type logCollector struct {
	mu   sync.Mutex
	logs []string
}

func (l *logCollector) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.logs = append(l.logs, req.Params.Data.(string))
	}}
}

func (l *logCollector) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.logs)
}

func TestServeStdio(t *testing.T) {
	t.Parallel()
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) { testServeStdio(t, rev) })
	}
}

func testServeStdio(t *testing.T, revision string) {
	cmd := toolcCmd(t, "serve", "--stdio", faultyPattern)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	var logs logCollector
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, logs.options())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // the first run builds the plugin
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("connecting to toolc serve --stdio: %v\nstderr:\n%s", err, stderr.String())
	}
	exerciseMCP(t, session, logs.get, revision)
	if err := session.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("toolc serve --stdio ended with %v", cmd.ProcessState)
	}
	if !strings.Contains(stderr.String(), "[faulty] toolc: tool panic panicked: deliberate panic in faulty") {
		t.Errorf("the plugin's stderr did not reach toolc's, prefixed:\n%s", stderr.String())
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr.String())
	}
}

// startServeHTTP starts toolc serve over HTTP on a free port with args
// and returns its URL (without /mcp) and its stderr so far and to come.
func startServeHTTP(t testing.TB, args ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd := toolcCmd(t, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	url, stderr := startServeCmd(t, cmd)
	return cmd, url, stderr
}

// startServeCmd starts cmd, a toolc serve --http set up by the caller (its
// flags, its environment), and waits until it says where it serves: it
// returns that URL (http://HOST:PORT, without /mcp) and cmd's stderr so
// far and to come. The process is killed when the test ends.
func startServeCmd(t testing.TB, cmd *exec.Cmd) (string, *lockedBuffer) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	all := &lockedBuffer{}
	lines := bufio.NewScanner(stderr)
	addr := regexp.MustCompile(`serving MCP on (http://\S+)/mcp`)
	var url string
	for url == "" && lines.Scan() {
		all.Write([]byte(lines.Text() + "\n"))
		if m := addr.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("toolc serve did not say where it serves:\n%s", all.String())
	}
	go io.Copy(all, stderr)
	return url, all
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	cmd, url, all := startServeHTTP(t, faultyPattern)

	// Both revisions on the one endpoint, without a flag.
	for _, rev := range revisions {
		var logs logCollector
		client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, logs.options())
		session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
		if err != nil {
			t.Fatal(err)
		}
		exerciseMCP(t, session, logs.get, rev)
		session.Close()
	}

	// SIGTERM shuts the server down cleanly.
	if err := terminate(t, cmd, 15*time.Second, all.String); err != nil {
		t.Errorf("toolc serve after SIGTERM: %v\n%s", err, all.String())
	}
}

// terminate sends cmd SIGTERM and returns how it exited, failing the test
// if it has not within the time given; output says what it printed.
func terminate(t *testing.T, cmd *exec.Cmd, within time.Duration, output func() string) error {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("toolc did not stop within %v of SIGTERM:\n%s", within, output())
		return nil
	}
}

func TestCallCommand(t *testing.T) {
	t.Parallel()
	run := func(stdin string, args ...string) result {
		t.Helper()
		cmd := toolcCmd(t, append([]string{"call"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
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
	decode := func(r result) map[string]any {
		t.Helper()
		var out map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
		}
		return out
	}

	r := run("", faultyPattern, "echo", `{"text": "hi", "times": 2}`)
	if r.status != exitOK {
		t.Fatalf("toolc call echo: exit %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	out := decode(r)
	if out["isError"] != false || !reflect.DeepEqual(out["structuredContent"], map[string]any{"echo": "hihi", "times": 2.0}) {
		t.Errorf("toolc call echo printed %s", r.stdout)
	}
	if content, _ := out["content"].([]any); len(content) != 1 {
		t.Errorf("content = %v", out["content"])
	}

	// Arguments on stdin, and the tool by its MCP name.
	r = run(`{"text": "in"}`, faultyPattern, mcpToolName(t, faultyMCPTools(t), "echo"))
	if r.status != exitOK || !reflect.DeepEqual(decode(r)["structuredContent"], map[string]any{"echo": "in", "times": 1.0}) {
		t.Errorf("toolc call with stdin: exit %d\n%s%s", r.status, r.stdout, r.stderr)
	}

	// A tool error: exit 1, and the result on stdout all the same.
	r = run("", faultyPattern, "echo", `{"text": ""}`)
	if r.status != exitFail {
		t.Errorf("toolc call with invalid arguments: exit %d, want 1\n%s%s", r.status, r.stdout, r.stderr)
	}
	if out := decode(r); out["isError"] != true || !strings.Contains(r.stdout, `field \"text\" must be at least 1 character long`) {
		t.Errorf("toolc call with invalid arguments printed %s", r.stdout)
	}
	r = run("", faultyPattern, "bad_result")
	if r.status != exitFail || !strings.Contains(r.stdout, "breaks its contract") {
		t.Errorf("toolc call bad_result: exit %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	r = run("", "--timeout", "200ms", faultyPattern, "hang", `{}`)
	if r.status != exitFail || !strings.Contains(r.stdout, "did not finish within 200ms") {
		t.Errorf("toolc call hang: exit %d\n%s%s", r.status, r.stdout, r.stderr)
	}

	// An unknown tool: exit 2, and a message naming it and the tools there
	// are.
	r = run("", faultyPattern, "nope", `{}`)
	if r.status != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, `unknown tool "nope"`) || !strings.Contains(r.stderr, "echo") {
		t.Errorf("toolc call nope: exit %d\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
}
