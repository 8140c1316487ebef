package main

import (
	"bufio"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeStdioElsewhere is toolc serve --stdio as MCP Inspector and
// Claude Desktop start it: from another working directory, with an
// absolute pattern. The handler builds from the contract's own directory
// (it used to be looked for under the working directory), the call is
// answered, and SIGTERM ends toolc with status 0 and no ERROR line (go-sdk's
// Server.Run logged "server run cancelled" at every shutdown).
func TestServeStdioElsewhere(t *testing.T) {
	t.Parallel()
	abs, err := filepath.Abs(filepath.Join(repoRoot, faultyPattern))
	if err != nil {
		t.Fatal(err)
	}
	cmd := toolcCmd(t, "serve", "--stdio", abs)
	cmd.Dir = t.TempDir()
	stdin, stdout, stderr := startStdio(t, cmd)
	exited := make(chan error, 1)
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait() // after stdout is read to its end, as Wait needs
	}()
	tool := mcpToolName(t, faultyMCPTools(t), "sleep")
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"ms":1}}}`,
	} {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(3 * time.Minute) // the first run builds the plugin
	for answered := 0; answered < 2; {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("toolc serve --stdio %s from %s ended before answering\nstderr:\n%s", abs, cmd.Dir, stderr.String())
			}
			if strings.Contains(line, `"id":2`) && !strings.Contains(line, "slept 1ms") {
				t.Fatalf("the call = %s\nstderr:\n%s", line, stderr.String())
			}
			answered++
		case <-timeout:
			t.Fatalf("no answer\nstderr:\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil || strings.Contains(stderr.String(), "level=ERROR") {
			t.Errorf("toolc after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("toolc did not exit after SIGTERM\nstderr:\n%s", stderr.String())
	}
}
