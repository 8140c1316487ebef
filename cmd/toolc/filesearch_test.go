package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClaudeDesktopConfig starts toolc as the README's Claude Desktop
// configuration says, in /, as Claude Desktop does, and has a real MCP
// client list the file-search example's root: the configured one, and
// without it the contract's directory, never the file system's root.
func TestClaudeDesktopConfig(t *testing.T) {
	_, after, _ := strings.Cut(readFile(t, "../../README.md"), "- **Claude Desktop** (`claude_desktop_config.json`):\n  ```json\n")
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("README.md has no Claude Desktop configuration")
	}
	var config struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(block, "/path/to/repo", root)), &config); err != nil {
		t.Fatalf("the README's Claude Desktop configuration: %v\n%s", err, block)
	}
	server, ok := config.MCPServers["toolc"]
	if !ok || server.Command != "toolc" || server.Env["TOOLC_FILESEARCH_ROOT"] == "" {
		t.Fatalf("the README's Claude Desktop configuration runs no toolc with TOOLC_FILESEARCH_ROOT: %s", block)
	}
	cache := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // an entry of the root
	}{
		{"as configured", server.Env, "go.mod"},
		{"without TOOLC_FILESEARCH_ROOT", nil, "filesearch.cue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(toolcBin, server.Args...)
			cmd.Dir = "/"
			cmd.Env = append(os.Environ(), "TOOLC_CACHE="+cache, "TOOLC_FILESEARCH_ROOT=")
			for k, v := range tc.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // builds the examples' plugins
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "claude-desktop-like", Version: "1"}, nil)
			session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("connecting: %v\n%s", err, stderr.String())
			}
			defer session.Close()
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "file-search_list_directory", Arguments: map[string]any{"path": "."}})
			if err != nil || res.IsError {
				t.Fatalf("list_directory: %v %s\n%s", err, resultText(res), stderr.String())
			}
			var out struct {
				Names []string `json:"names"`
			}
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(out.Names, tc.want) || slices.Contains(out.Names, "proc/") || slices.Contains(out.Names, "etc/") {
				t.Errorf("list_directory . = %v, want the entries of the directory with %s", out.Names, tc.want)
			}
		})
	}
}
