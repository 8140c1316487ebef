package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeOnly builds toolc with -tags serveonly, as docs/deploying.md
// builds the toolc of a container, and checks what that build is for: it
// links no CUE and no compiler, serves and calls a bundle that the full
// toolc wrote, where there is no Go, and refuses contracts and the
// commands that compile them with exit status 2 and a message that says
// why.
func TestServeOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolc")
	}
	t.Parallel()
	deps, err := exec.Command("go", "list", "-deps", "-tags", "serveonly", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps -tags serveonly: %v", err)
	}
	for _, p := range strings.Fields(string(deps)) {
		if strings.HasPrefix(p, "cuelang.org/") || p == "github.com/toolc/toolc/compiler" {
			t.Errorf("toolc built with -tags serveonly links %s", p)
		}
	}
	bin := serveOnlyBin(t)
	b := sharedBundle(t)
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = t.TempDir(), noGoEnv(t)
		return cmd
	}

	t.Run("serve", func(t *testing.T) {
		url, stderr := startServeCmd(t, run("serve", "--http", "127.0.0.1:0", "--bundle", b))
		client := mcp.NewClient(&mcp.Implementation{Name: "serveonly-test", Version: "1"}, nil)
		session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr)
		}
		defer session.Close()
		res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "svc_echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil || resultText(res) != "v1:hi" {
			t.Errorf("tools/call svc_echo: %v %v\n%s", res, err, stderr)
		}
	})

	t.Run("call", func(t *testing.T) {
		out, err := run("call", "--catalog", filepath.Join(b, "catalog.json"), "echo", `{"message":"hi"}`).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"text": "v1:hi"`) {
			t.Errorf("toolc call --catalog BUNDLE/catalog.json: %v\n%s", err, out)
		}
	})

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--http", "127.0.0.1:0", "./..."}, "toolc serve: this toolc was built with -tags serveonly and compiles no contracts: give --bundle DIR or --catalog FILE"},
		{[]string{"call", "./...", "echo", "{}"}, "toolc call: this toolc was built with -tags serveonly and compiles no contracts"},
		{[]string{"check", "./..."}, `toolc: unknown command "check"`},
		{[]string{"bundle", "-o", "out", "./..."}, `toolc: unknown command "bundle"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := run(tc.args...)
			cmd.Dir = newDevProject(t)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), tc.want) {
				t.Errorf("toolc %s: %v, want exit status %d and %q:\n%s", strings.Join(tc.args, " "), err, exitUsage, tc.want, out)
			}
		})
	}

	out, err := run("help").Output()
	if err != nil || !strings.Contains(string(out), "-tags serveonly") || strings.Contains(string(out), "toolc check") || strings.Contains(string(out), "Patterns are") {
		t.Errorf("toolc help: %v, want the serving commands and what the build leaves out:\n%s", err, out)
	}
}

var serveOnlyFile builtOnce

// serveOnlyBin is toolc built with -tags serveonly, once, beside the
// toolc under test (TestMain removes it).
func serveOnlyBin(tb testing.TB) string {
	tb.Helper()
	return serveOnlyFile.get(tb, func() (string, error) {
		bin := filepath.Join(filepath.Dir(toolcBin), "toolc-serveonly")
		if out, err := exec.Command("go", "build", "-tags", "serveonly", "-o", bin, ".").CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build -tags serveonly: %v\n%s", err, out)
		}
		return bin, nil
	})
}
