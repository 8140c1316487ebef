package clientconfig_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/clientconfig"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestPlace: each client's documented place, on each system, in a fake
// home.
func TestPlace(t *testing.T) {
	home, proj := "/home/ada", "/src/my-tools"
	for _, tc := range []struct {
		client, goos string
		vars         map[string]string
		file         string
		keys         []string
	}{
		{"claude-desktop", "darwin", nil, filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), []string{"mcpServers"}},
		{"claude-desktop", "windows", map[string]string{"APPDATA": "/appdata"}, filepath.Join("/appdata", "Claude", "claude_desktop_config.json"), []string{"mcpServers"}},
		{"claude-desktop", "windows", nil, filepath.Join(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json"), []string{"mcpServers"}},
		{"claude-desktop", "linux", nil, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), []string{"mcpServers"}},
		{"claude-desktop", "linux", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, filepath.Join("/xdg", "Claude", "claude_desktop_config.json"), []string{"mcpServers"}},
		{"claude-code", "linux", nil, filepath.Join(home, ".claude.json"), []string{"projects", proj, "mcpServers"}},
		{"claude-code", "darwin", map[string]string{"CLAUDE_CONFIG_DIR": "/cc"}, filepath.Join("/cc", ".claude.json"), []string{"projects", proj, "mcpServers"}},
		{"cursor", "linux", nil, filepath.Join(home, ".cursor", "mcp.json"), []string{"mcpServers"}},
		{"cursor", "windows", nil, filepath.Join(home, ".cursor", "mcp.json"), []string{"mcpServers"}},
		{"vscode", "darwin", nil, filepath.Join(proj, ".vscode", "mcp.json"), []string{"servers"}},
	} {
		c, ok := clientconfig.Lookup(tc.client)
		if !ok {
			t.Fatalf("no client %s", tc.client)
		}
		p, err := c.Place(clientconfig.Env{GOOS: tc.goos, Home: home, ProjectDir: proj, Getenv: env(tc.vars)}, "")
		if err != nil || p.File != tc.file || !slices.Equal(p.Keys, tc.keys) {
			t.Errorf("%s on %s %v: %+v, %v; want %s %q", tc.client, tc.goos, tc.vars, p, err, tc.file, tc.keys)
		}
	}
	c, _ := clientconfig.Lookup("claude-code")
	if p, err := c.Place(clientconfig.Env{GOOS: "linux", Home: home, ProjectDir: proj, Getenv: env(nil)}, "other/.mcp.json"); err != nil ||
		!filepath.IsAbs(p.File) || filepath.Base(p.File) != ".mcp.json" || !slices.Equal(p.Keys, []string{"mcpServers"}) {
		t.Errorf("--config other/.mcp.json: %+v, %v; want the servers at its top level", p, err)
	}
	if _, ok := clientconfig.Lookup("zed"); ok {
		t.Error("Lookup found a client that is not there")
	}
	if ids := clientconfig.IDs(); ids != "claude-desktop|claude-code|cursor|vscode" {
		t.Errorf("IDs = %s", ids)
	}
}

// TestNewServer: absolute paths everywhere, PATH with go's directory
// first, the Go settings of the environment, and a bundle with neither.
func TestNewServer(t *testing.T) {
	vars := map[string]string{"GOFLAGS": "-mod=mod", "GOPROXY": "https://proxy.example", "HOME": "/home/ada", "SECRET": "x"}
	o := clientconfig.Options{
		Toolc: "/home/ada/go/bin/toolc", Dir: "/src/my-tools", Patterns: []string{"./...", "tools/weather", "/abs/x/..."},
		Go: "/usr/local/go/bin/go", GOOS: "linux", Getenv: env(vars),
	}
	s, err := clientconfig.NewServer("my-tools", o)
	if err != nil {
		t.Fatal(err)
	}
	want := clientconfig.Server{
		Name: "my-tools", Command: "/home/ada/go/bin/toolc",
		Args: []string{"serve", "--stdio", "/src/my-tools/...", "/src/my-tools/tools/weather", "/abs/x/..."},
		Env:  map[string]string{"PATH": "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin", "GOFLAGS": "-mod=mod", "GOPROXY": "https://proxy.example"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("NewServer =\n%+v\nwant\n%+v", s, want)
	}

	o.Patterns, o.Dev, o.Go = nil, true, "/usr/bin/go"
	if s, err := clientconfig.NewServer("my-tools", o); err != nil || !slices.Equal(s.Args, []string{"dev", "--stdio", "/src/my-tools/..."}) ||
		s.Env["PATH"] != "/usr/bin:/usr/local/bin:/bin" {
		t.Errorf("--dev, no patterns, go in /usr/bin: %+v, %v", s, err)
	}

	o.Dev, o.Go, o.Bundle = false, "", "dist"
	if s, err := clientconfig.NewServer("my-tools", o); err != nil || !slices.Equal(s.Args, []string{"serve", "--stdio", "--bundle", "/src/my-tools/dist"}) || s.Env != nil {
		t.Errorf("--bundle dist: %+v, %v; want the bundle's absolute path and no environment", s, err)
	}

	for name, bad := range map[string]clientconfig.Options{
		"no go":              {Toolc: o.Toolc, Dir: o.Dir, GOOS: "linux", Getenv: env(nil)},
		"relative toolc":     {Toolc: "toolc", Dir: o.Dir, Go: "/usr/bin/go", Getenv: env(nil)},
		"bundle and pattern": {Toolc: o.Toolc, Dir: o.Dir, Bundle: "dist", Patterns: []string{"./..."}, Getenv: env(nil)},
		"bundle and dev":     {Toolc: o.Toolc, Dir: o.Dir, Bundle: "dist", Dev: true, Getenv: env(nil)},
	} {
		if _, err := clientconfig.NewServer("x", bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

var server = clientconfig.Server{
	Name: "my-tools", Command: "/bin/toolc", Args: []string{"serve", "--stdio", "/src/my-tools/..."},
	Env: map[string]string{"PATH": "/usr/local/go/bin:/usr/bin:/bin"},
}

// TestInstallFresh: with no file, each client's format, in a new file of
// mode 0600.
func TestInstallFresh(t *testing.T) {
	for _, tc := range []struct {
		client, want string
	}{
		{"claude-desktop", `{"mcpServers":{"my-tools":{"command":"/bin/toolc","args":["serve","--stdio","/src/my-tools/..."],"env":{"PATH":"/usr/local/go/bin:/usr/bin:/bin"}}}}`},
		{"claude-code", `{"projects":{"/src/my-tools":{"mcpServers":{"my-tools":{"type":"stdio","command":"/bin/toolc","args":["serve","--stdio","/src/my-tools/..."],"env":{"PATH":"/usr/local/go/bin:/usr/bin:/bin"}}}}}}`},
		{"cursor", `{"mcpServers":{"my-tools":{"command":"/bin/toolc","args":["serve","--stdio","/src/my-tools/..."],"env":{"PATH":"/usr/local/go/bin:/usr/bin:/bin"}}}}`},
		{"vscode", `{"servers":{"my-tools":{"type":"stdio","command":"/bin/toolc","args":["serve","--stdio","/src/my-tools/..."],"env":{"PATH":"/usr/local/go/bin:/usr/bin:/bin"}}}}`},
	} {
		t.Run(tc.client, func(t *testing.T) {
			home := t.TempDir()
			c, _ := clientconfig.Lookup(tc.client)
			p, err := c.Place(clientconfig.Env{GOOS: "linux", Home: home, ProjectDir: "/src/my-tools", Getenv: env(nil)}, "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.client == "vscode" {
				p.File = filepath.Join(home, ".vscode", "mcp.json") // not in /src
			}
			res, err := c.Install(p, server)
			if err != nil || res.Outcome != clientconfig.Added {
				t.Fatalf("Install = %+v, %v", res, err)
			}
			data, err := os.ReadFile(p.File)
			if err != nil {
				t.Fatal(err)
			}
			if got := compact(t, data); got != tc.want {
				t.Errorf("wrote\n%s\nwant\n%s", got, tc.want)
			}
			if !strings.HasPrefix(string(data), "{\n  \"") || !strings.HasSuffix(string(data), "}\n") {
				t.Errorf("not indented JSON with a newline at its end:\n%s", data)
			}
			if fi, _ := os.Stat(p.File); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
				t.Errorf("a new configuration has mode %v, want 0600", fi.Mode().Perm())
			}
		})
	}
}

// compact is data without its indentation, strings as they are written.
func compact(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	return b.String()
}

// TestInstallKeeps: an existing configuration keeps its other servers, its
// keys (in their order), the keys the user added to the entry and its
// env, and its mode; only what toolc owns changes, and Install says
// which; a second Install changes nothing and leaves the file alone; a
// symbolic link is followed.
func TestInstallKeeps(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	before := `{
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]},
        "my-tools": {"command": "toolc", "args": ["serve", "--stdio", "./..."], "disabled": false, "env": {"API_KEY": "k-<1>&"}}
    },
    "zeta": [1, 2.50, {"b": 1, "a": 2}]
}
`
	if err := os.WriteFile(target, []byte(before), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	c, _ := clientconfig.Lookup("claude-desktop")
	p, err := c.Place(clientconfig.Env{}, link)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Install(p, server)
	if err != nil || res.Outcome != clientconfig.Updated || !slices.Equal(res.Changed, []string{"command", "args", "env.PATH"}) {
		t.Fatalf("Install = %+v, %v; want command, args and env.PATH changed", res, err)
	}
	want := `{"globalShortcut":"Ctrl+Space","mcpServers":{"filesystem":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/home/ada"]},` +
		`"my-tools":{"command":"/bin/toolc","args":["serve","--stdio","/src/my-tools/..."],"disabled":false,"env":{"API_KEY":"k-<1>&","PATH":"/usr/local/go/bin:/usr/bin:/bin"}}},` +
		`"zeta":[1,2.50,{"b":1,"a":2}]}`
	data, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if got := compact(t, data); got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symbolic link was replaced: %v", err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the 0640 it had", fi.Mode().Perm())
	}

	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(target, old, old); err != nil {
		t.Fatal(err)
	}
	if res, err := c.Install(p, server); err != nil || res.Outcome != clientconfig.Unchanged || len(res.Changed) > 0 {
		t.Errorf("second Install = %+v, %v; want Unchanged", res, err)
	}
	if fi, _ := os.Stat(target); !fi.ModTime().Equal(old) {
		t.Error("an Install that changed nothing wrote the file")
	}
}

// TestInstallRefuses: a file that is not a JSON object, JSONC with
// comments, or servers that are not an object are left as they were,
// with an error naming the file and the problem.
func TestInstallRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"JSONC comment":         {"{\n  // my servers\n  \"servers\": {}\n}\n", "comments"},
		"trailing comma":        {`{"servers": {},}`, "invalid character"},
		"array":                 {`[]`, "an array, not an object"},
		"servers not an object": {`{"servers": []}`, `"servers" is an array, not an object`},
		"entry not an object":   {`{"servers": {"my-tools": "x"}}`, `"servers.my-tools" is a string, not an object`},
		"two values":            {`{} {}`, "more after the object"},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(file, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			c, _ := clientconfig.Lookup("vscode")
			p, _ := c.Place(clientconfig.Env{}, file)
			_, err := c.Install(p, server)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), file) {
				t.Errorf("Install = %v, want an error naming %s and saying %q", err, file, tc.want)
			}
			if data, _ := os.ReadFile(file); string(data) != tc.data {
				t.Errorf("the file changed:\n%s", data)
			}
		})
	}
}
