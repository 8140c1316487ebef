package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/clientconfig"
)

// TestClaudeDesktopConfig configures Claude Desktop as the README says:
// toolc install claude-desktop ./examples/... in the checkout, then the
// file-search example's two variables added to the entry's env by hand,
// which a second install keeps. It starts toolc as that entry says, in /
// with only the entry's env besides HOME, as Claude Desktop does, and has
// a real MCP client list the file-search example's root: the configured
// one, and without it the contract's directory, never the file system's
// root.
func TestClaudeDesktopConfig(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the entry is read from Linux's place")
	}
	readme := docs(t).All()
	for _, want := range []string{"$ toolc install claude-desktop\n", "`\"TOOLC_FILESEARCH_ROOT\":\n\"/path/to/repo\"`", "`\"TOOLC_PLUGIN_ENV\": \"TOOLC_FILESEARCH_ROOT\"`"} {
		if !strings.Contains(readme, want) {
			t.Fatalf("README.md no longer says %s, which this test follows", want)
		}
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if r := installRun(t, root, home, "claude-desktop", "./examples/..."); r.status != 0 {
		t.Fatalf("toolc install claude-desktop ./examples/... = %d: %s", r.status, r.stderr)
	}
	file := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	var config map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(readFile(t, file)), &config); err != nil {
		t.Fatal(err)
	}
	name := clientconfig.DefaultName(root, "")
	entry := config["mcpServers"][name]
	env := entry["env"].(map[string]any)
	env["TOOLC_FILESEARCH_ROOT"] = root
	env["TOOLC_PLUGIN_ENV"] = "TOOLC_FILESEARCH_ROOT"
	edited, _ := json.MarshalIndent(config, "", "  ")
	if err := os.WriteFile(file, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := installRun(t, root, home, "claude-desktop", "./examples/..."); r.status != 0 || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("a second install = %d %q, want nothing changed", r.status, r.stdout)
	}
	e, _ := readEntry(t, file, "mcpServers", name)
	if e.Env["TOOLC_FILESEARCH_ROOT"] != root || e.Command != toolcBin {
		t.Fatalf("the entry after a second install: %+v", e)
	}
	server := struct {
		Args []string
		Env  map[string]string
	}{e.Args, e.Env}
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
			cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "TOOLC_CACHE=" + cache}
			for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS"} {
				if v, ok := os.LookupEnv(k); ok && server.Env[k] == "" {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
			if tc.env == nil {
				cmd.Env = append(cmd.Env, "PATH="+server.Env["PATH"])
			}
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
