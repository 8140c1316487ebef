package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioDeclaresBeforeLoad: a stdio client initializes while the
// handlers build (here for good: there is no go command), and its
// session's capabilities are fixed then. toolc serve declares the prompts,
// resources and completions that its contract has, and no others; toolc
// dev declares all three, which an edit may bring. Before, a session that
// initialized before the load had none of them, and the MCP Inspector and
// desktop clients, which follow the capabilities, showed no prompts.
func TestStdioDeclaresBeforeLoad(t *testing.T) {
	t.Parallel()
	plain := newDevProject(t)
	withPrompt := newDevProject(t)
	contract := filepath.Join(withPrompt, "api", "svc.cue")
	writeDevFile(t, contract, mustReplace(t, readDevFile(t, contract), "\ttools: {",
		"\tprompts: greet: {\n\t\tdescription: \"Greet someone\"\n\t\tmessages: [{role: \"user\", text: \"Say hello\"}]\n\t}\n\ttools: {"))
	for _, tc := range []struct {
		name, command, dir              string
		prompts, resources, completions bool
	}{
		{"serve, tools only", "serve", plain, false, false, false},
		{"serve, a prompt", "serve", withPrompt, true, false, true},
		{"dev, tools only", "dev", plain, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr := &lockedBuffer{}
			cmd := exec.Command(toolcBin, tc.command, "--stdio", "./...")
			cmd.Dir, cmd.Env, cmd.Stderr = tc.dir, append(noGoEnv(t), "TOOLC_CACHE="+t.TempDir()), stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "declared", Version: "1"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr)
			}
			defer session.Close()
			caps := session.InitializeResult().Capabilities
			if caps.Tools == nil || (caps.Prompts != nil) != tc.prompts || (caps.Resources != nil) != tc.resources || (caps.Completions != nil) != tc.completions {
				t.Errorf("capabilities: tools %v, prompts %v, resources %v, completions %v; want prompts %t, resources %t, completions %t",
					caps.Tools, caps.Prompts, caps.Resources, caps.Completions, tc.prompts, tc.resources, tc.completions)
			}
		})
	}
}
