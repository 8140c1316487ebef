package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// installRun runs toolc install in dir with a fake home directory: HOME
// is home, and nothing else points elsewhere.
func installRun(t *testing.T, dir, home string, args ...string) result {
	t.Helper()
	cmd := exec.Command(toolcBin, append([]string{"install"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "USERPROFILE="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=", "APPDATA=")
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

// entry is a stdio server's entry in any client's configuration.
type entry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// readEntry reads the entry at keys in a configuration file.
func readEntry(t *testing.T, file string, keys ...string) (entry, map[string]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, data)
	}
	obj := top
	for _, k := range keys[:len(keys)-1] {
		var next map[string]json.RawMessage
		if err := json.Unmarshal(obj[k], &next); err != nil {
			t.Fatalf("%s: no object at %s:\n%s", file, k, data)
		}
		obj = next
	}
	var e entry
	if err := json.Unmarshal(obj[keys[len(keys)-1]], &e); err != nil {
		t.Fatalf("%s: no entry %q:\n%s", file, keys, data)
	}
	return e, obj
}

// TestInstall writes each client's configuration into a fake home (and
// the project, for VS Code), in the place and format each documents, with
// absolute paths; a second run changes nothing; another server in the
// file is kept; and a client started as the configuration says, in / with
// only its env, serves the tools.
func TestInstall(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the places checked here are Linux's and macOS's")
	}
	weather, err := filepath.Abs("../../examples/weather")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	goBin, _ = filepath.Abs(goBin)
	project := filepath.Join(t.TempDir(), "my-tools")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	claudeDesktop := filepath.Join(".config", "Claude", "claude_desktop_config.json")
	if runtime.GOOS == "darwin" {
		claudeDesktop = filepath.Join("Library", "Application Support", "Claude", "claude_desktop_config.json")
	}
	for _, tc := range []struct {
		client string
		file   func(home string) string
		keys   []string
		typed  bool
	}{
		{"claude-desktop", func(home string) string { return filepath.Join(home, claudeDesktop) }, []string{"mcpServers", "my-tools"}, false},
		{"claude-code", func(home string) string { return filepath.Join(home, ".claude.json") }, []string{"projects", project, "mcpServers", "my-tools"}, true},
		{"cursor", func(home string) string { return filepath.Join(home, ".cursor", "mcp.json") }, []string{"mcpServers", "my-tools"}, false},
		{"vscode", func(string) string { return filepath.Join(project, ".vscode", "mcp.json") }, []string{"servers", "my-tools"}, true},
	} {
		t.Run(tc.client, func(t *testing.T) {
			home := t.TempDir()
			file := tc.file(home)
			// Another server, and a key of the client's own, are there first.
			other := `{"zz": true, "` + tc.keys[0] + `": {"other": {"command": "npx", "args": ["other-server"]}}}`
			if tc.client == "claude-code" {
				other = `{"zz": true, "projects": {"/elsewhere": {"mcpServers": {"other": {"command": "npx"}}}}}`
			}
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(other), 0o600); err != nil {
				t.Fatal(err)
			}
			r := installRun(t, project, home, tc.client, weather)
			if r.status != 0 || !strings.Contains(r.stdout, file+`: added MCP server "my-tools"`) {
				t.Fatalf("install %s = %d\nstdout: %s\nstderr: %s", tc.client, r.status, r.stdout, r.stderr)
			}
			e, _ := readEntry(t, file, tc.keys...)
			wantPath := filepath.Dir(goBin) + ":"
			if e.Command != toolcBin || !slices.Equal(e.Args, []string{"serve", "--stdio", weather}) || !strings.HasPrefix(e.Env["PATH"], wantPath) ||
				(e.Type == "stdio") != tc.typed {
				t.Errorf("entry %+v; want toolc at %s serving %s, PATH starting %s, type stdio %v", e, toolcBin, weather, wantPath, tc.typed)
			}
			data, _ := os.ReadFile(file)
			if !strings.Contains(string(data), `"other"`) || !strings.HasPrefix(compactJSON(t, data), `{"zz":true,`) {
				t.Errorf("the other server or the client's own key is gone, or moved:\n%s", data)
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the 0600 it had", fi.Mode().Perm())
			}
			r = installRun(t, project, home, tc.client, weather)
			if r.status != 0 || !strings.Contains(r.stdout, "nothing changed") {
				t.Errorf("second install = %d %q, want nothing changed", r.status, r.stdout)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(again, data) {
				t.Error("the second install changed the file")
			}
			r = installRun(t, project, home, tc.client, "--dev", weather)
			if r.status != 0 || !strings.Contains(r.stdout, `updated MCP server "my-tools": args changed`) {
				t.Errorf("install --dev = %d %q, want args changed", r.status, r.stdout)
			}
		})
	}

	t.Run("the client starts it", func(t *testing.T) {
		home := t.TempDir()
		if r := installRun(t, project, home, "claude-desktop", weather); r.status != 0 {
			t.Fatalf("install = %d: %s", r.status, r.stderr)
		}
		e, _ := readEntry(t, filepath.Join(home, claudeDesktop), "mcpServers", "my-tools")
		cmd := exec.Command(e.Command, e.Args...)
		cmd.Dir = "/"
		// What a desktop client passes: its HOME, and the entry's env. The
		// build cache is the test's own.
		cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "TOOLC_CACHE=" + t.TempDir()}
		for k, v := range e.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
			if v, ok := os.LookupEnv(k); ok && e.Env[k] == "" {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		session, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "weather-service_query_weather", Arguments: map[string]any{"city": "Oslo"}})
		if err != nil || res.IsError {
			t.Fatalf("call = %+v, %v", res, err)
		}
	})

	t.Run("bundle", func(t *testing.T) {
		home, bundle := t.TempDir(), filepath.Join(project, "dist")
		if err := os.Mkdir(bundle, 0o755); err != nil {
			t.Fatal(err)
		}
		r := installRun(t, project, home, "cursor", "--bundle", "dist")
		if r.status != 0 {
			t.Fatalf("install --bundle = %d: %s", r.status, r.stderr)
		}
		e, _ := readEntry(t, filepath.Join(home, ".cursor", "mcp.json"), "mcpServers", "dist")
		if !slices.Equal(e.Args, []string{"serve", "--stdio", "--bundle", bundle}) || e.Env != nil {
			t.Errorf("entry %+v; want the bundle's absolute path and no env", e)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		home := t.TempDir()
		bad := writeFiles(t, map[string]string{"svc/svc.cue": "package svc\n\nimport \"github.com/toolc/toolc/schema\"\n\nschema.#Service & {name: \"Bad Name\", version: \"1.0.0\", description: \"x\", tools: {}}\n"})
		for _, tc := range []struct {
			dir    string
			args   []string
			status int
			want   string
		}{
			{project, []string{"zed"}, 2, `unknown client "zed"`},
			{project, nil, 2, "usage: toolc install claude-desktop|claude-code|cursor|vscode"},
			{project, []string{"cursor", "--bundle", "nowhere"}, 2, "--bundle nowhere: not a directory"},
			{project, []string{"cursor", "--bundle", project, weather}, 2, "not both"},
			{project, []string{"cursor", "./nothing-here"}, 2, "nothing-here"},
			{bad, []string{"cursor", "./..."}, 1, "nothing written"},
		} {
			r := installRun(t, tc.dir, home, tc.args...)
			if r.status != tc.status || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("install %q = %d %q, want %d and %q", tc.args, r.status, r.stderr, tc.status, tc.want)
			}
		}
		if entries, _ := os.ReadDir(home); len(entries) > 0 {
			t.Errorf("a refused install wrote into the home directory: %v", entries)
		}
	})
}

func compactJSON(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestREADMEInstall holds the README's toolc install claude-desktop to what
// it prints for a project my-tools in /home/ada, on Linux, with toolc in
// ~/go/bin and go in /usr/local/go/bin.
func TestREADMEInstall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the README shows Linux's place")
	}
	home := t.TempDir()
	project := filepath.Join(home, "my-tools")
	if r := toolc(t, home, "init", "my-tools"); r.status != 0 {
		t.Fatalf("init = %d: %s", r.status, r.stderr)
	}
	r := installRun(t, project, home, "claude-desktop")
	if r.status != 0 {
		t.Fatalf("install = %d: %s", r.status, r.stderr)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	goDir, _ := filepath.Abs(filepath.Dir(goBin))
	var lines []string
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "\tenv      GO"):
			continue // the Go settings of the test's environment
		case strings.HasPrefix(line, "\tenv      PATH="):
			if !strings.HasPrefix(line, "\tenv      PATH="+goDir+":") {
				t.Errorf("PATH does not start with go's directory %s: %s", goDir, line)
			}
			line = "\tenv      PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"
		}
		line = strings.ReplaceAll(line, toolcBin, "/home/ada/go/bin/toolc")
		lines = append(lines, strings.ReplaceAll(line, home, "/home/ada"))
	}
	got := strings.Join(lines, "\n")
	readme := docs(t).MustAfter(t, "```\n$ toolc install claude-desktop\n")
	readme, _, _ = strings.Cut(readme, "```")
	if readme != got {
		t.Errorf("README.md shows toolc install claude-desktop printing\n%s\nbut it prints\n%s", readme, got)
	}
}
