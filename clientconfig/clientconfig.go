// Package clientconfig writes the entry that starts toolc into the MCP
// configuration of a desktop client: Claude Desktop, Claude Code, Cursor
// or VS Code. Each Client knows where its configuration lives on Linux,
// macOS and Windows (Client.Place) and how it spells a stdio server;
// NewServer makes the entry, with absolute paths and the environment
// toolc needs, since these clients start a server in a directory of
// their choosing with a minimal PATH; and Install puts the entry in,
// keeping every other server and every key it does not own, in their
// order, and writes the file atomically, or not at all when nothing
// changed. Executable, GoCommand and DefaultName find what an entry names
// (the running toolc, refusing go run's temporary build; go; the server's
// name), and Result.Report says what Install did, as toolc install prints
// it.
package clientconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Client is a desktop MCP client whose configuration toolc can write.
type Client struct {
	// ID names the client on toolc's command line: "claude-desktop".
	ID string
	// Name is the client's own name, for messages: "Claude Desktop".
	Name string
	// serversKey is the key of the object of servers: "mcpServers", or
	// VS Code's "servers".
	serversKey string
	// typed clients want "type": "stdio" in each entry.
	typed bool
	// place is where the configuration lives.
	place func(e Env) (string, []string, error)
	// Reload says how the client picks up the change.
	Reload string
}

// Clients are the clients, in the order toolc's usage names them.
func Clients() []Client {
	return []Client{
		{
			ID: "claude-desktop", Name: "Claude Desktop", serversKey: "mcpServers",
			place:  claudeDesktop,
			Reload: "Quit Claude Desktop (from its menu: closing the window leaves it running) and start it again.",
		},
		{
			ID: "claude-code", Name: "Claude Code", serversKey: "mcpServers", typed: true,
			place:  claudeCode,
			Reload: "Start claude in this directory; /mcp lists the server. A session already running keeps its servers until it restarts.",
		},
		{
			ID: "cursor", Name: "Cursor", serversKey: "mcpServers",
			place:  func(e Env) (string, []string, error) { return filepath.Join(e.Home, ".cursor", "mcp.json"), nil, nil },
			Reload: "Cursor reloads its MCP servers on its own; its MCP settings list the server.",
		},
		{
			ID: "vscode", Name: "VS Code", serversKey: "servers", typed: true,
			place: func(e Env) (string, []string, error) {
				return filepath.Join(e.ProjectDir, ".vscode", "mcp.json"), nil, nil
			},
			Reload: "Open this directory in VS Code, and start the server from .vscode/mcp.json (or the MCP: List Servers command).",
		},
	}
}

// Lookup returns the client with the given ID.
func Lookup(id string) (Client, bool) {
	i := slices.IndexFunc(Clients(), func(c Client) bool { return c.ID == id })
	if i < 0 {
		return Client{}, false
	}
	return Clients()[i], true
}

// IDs are the clients' IDs, joined as the usage line writes them.
func IDs() string {
	var ids []string
	for _, c := range Clients() {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, "|")
}

// Env is what the place of a configuration depends on.
type Env struct {
	GOOS string // runtime.GOOS
	Home string // the user's home directory
	// ProjectDir is the absolute directory of the project: VS Code's
	// workspace, Claude Code's project.
	ProjectDir string
	Getenv     func(string) string
}

// Place is where a client's servers are: a file, and the keys from its
// top-level object to the object of servers.
type Place struct {
	File string
	Keys []string
}

// Place returns where the client keeps its servers for e; config, when
// not empty, is a file to use instead, in the client's format, with the
// servers at its top level (a project's .cursor/mcp.json, Claude Code's
// .mcp.json, VS Code's user-profile mcp.json).
func (c Client) Place(e Env, config string) (Place, error) {
	if config != "" {
		abs, err := filepath.Abs(config)
		if err != nil {
			return Place{}, err
		}
		return Place{File: abs, Keys: []string{c.serversKey}}, nil
	}
	file, keys, err := c.place(e)
	if err != nil {
		return Place{}, err
	}
	return Place{File: file, Keys: append(keys, c.serversKey)}, nil
}

// claudeDesktop is claude_desktop_config.json in Claude's directory of
// application data: %APPDATA%\Claude on Windows, ~/Library/Application
// Support/Claude on macOS, and $XDG_CONFIG_HOME/Claude (~/.config/Claude)
// where the Linux builds keep it.
func claudeDesktop(e Env) (string, []string, error) {
	const name = "claude_desktop_config.json"
	switch e.GOOS {
	case "windows":
		appData := e.Getenv("APPDATA")
		if appData == "" {
			appData = filepath.Join(e.Home, "AppData", "Roaming")
		}
		return filepath.Join(appData, "Claude", name), nil, nil
	case "darwin":
		return filepath.Join(e.Home, "Library", "Application Support", "Claude", name), nil, nil
	}
	config := e.Getenv("XDG_CONFIG_HOME")
	if config == "" || !filepath.IsAbs(config) {
		config = filepath.Join(e.Home, ".config")
	}
	return filepath.Join(config, "Claude", name), nil, nil
}

// claudeCode is Claude Code's local scope, the default of claude mcp add:
// the project's entry in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json
// when that is set), which is the user's own, not the repository's: the
// entry holds paths of this machine. The project is keyed by its path.
func claudeCode(e Env) (string, []string, error) {
	if e.ProjectDir == "" {
		return "", nil, errors.New("no project directory")
	}
	dir := e.Home
	if d := e.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		dir = d
	}
	return filepath.Join(dir, ".claude.json"), []string{"projects", filepath.ToSlash(e.ProjectDir)}, nil
}

// Server is a stdio server's entry.
type Server struct {
	Name    string
	Command string
	Args    []string
	// Env holds the variables toolc needs; the client passes its own
	// environment, or part of it, besides.
	Env map[string]string
}

// Options are what NewServer makes an entry of.
type Options struct {
	// Toolc is the absolute path of the toolc binary.
	Toolc string
	// Dir is the project's absolute directory, against which relative
	// patterns and a relative bundle are made absolute.
	Dir string
	// Patterns are the contract patterns to serve from sources.
	Patterns []string
	// Bundle, if set, is a bundle directory to serve instead (toolc serve
	// --bundle): no sources, and no go.
	Bundle string
	// Dev serves with toolc dev, which rebuilds and reloads as the
	// sources change, instead of toolc serve.
	Dev bool
	// Go is the absolute path of the go command, which serving from
	// sources needs to build the handlers; empty with a bundle.
	Go string
	// GOOS is runtime.GOOS, for the form of PATH.
	GOOS string
	// Getenv reads the environment that toolc install runs in, whose Go
	// settings the server gets too.
	Getenv func(string) string
}

// goVars are the variables of go's own configuration that the build of a
// handler may depend on: set in the shell, not in go env -w's file, they
// would be missing from the client's environment.
var goVars = []string{"GOENV", "GOFLAGS", "GOPATH", "GOMODCACHE", "GOCACHE", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB", "GOINSECURE", "GOTOOLCHAIN"}

// NewServer returns the entry that starts toolc for o, named name: toolc
// by its absolute path, serving over stdio the patterns made absolute (the
// client picks the working directory), or the bundle. From sources, PATH
// holds go's directory before the system's, since a client starts servers
// with a minimal PATH, and the Go settings of the environment come along.
func NewServer(name string, o Options) (Server, error) {
	if !filepath.IsAbs(o.Toolc) {
		return Server{}, fmt.Errorf("toolc's path %s is not absolute", o.Toolc)
	}
	cmd := "serve"
	if o.Dev {
		cmd = "dev"
	}
	s := Server{Name: name, Command: o.Toolc, Args: []string{cmd, "--stdio"}}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(o.Dir, p)
	}
	if o.Bundle != "" {
		if o.Dev || len(o.Patterns) > 0 {
			return Server{}, errors.New("a bundle is served as it was built: give --bundle DIR or patterns, not both, and not --dev")
		}
		s.Args = append(s.Args, "--bundle", abs(o.Bundle))
		return s, nil
	}
	patterns := o.Patterns
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	for _, p := range patterns {
		base, wild := strings.CutSuffix(filepath.ToSlash(p), "...")
		if base == "" {
			base = "."
		}
		a := filepath.ToSlash(abs(filepath.FromSlash(base)))
		if wild {
			a = strings.TrimSuffix(a, "/") + "/..."
		}
		s.Args = append(s.Args, filepath.FromSlash(a))
	}
	if !filepath.IsAbs(o.Go) {
		return Server{}, errors.New("go is not on PATH: serving from sources builds each handler with go; install Go, or serve a bundle (--bundle DIR)")
	}
	s.Env = map[string]string{"PATH": searchPath(o.GOOS, filepath.Dir(o.Go), o.Getenv)}
	for _, v := range goVars {
		if val := o.Getenv(v); val != "" {
			s.Env[v] = val
		}
	}
	return s, nil
}

// searchPath is PATH for a server built from sources: go's directory, then
// the system's own, so that go finds what a build may run (a C compiler
// for cgo, git) where the system keeps it. It is the same on every run, so
// that installing twice changes nothing.
func searchPath(goos, goDir string, getenv func(string) string) string {
	dirs := []string{goDir}
	sep := ":"
	if goos == "windows" {
		sep = ";"
		root := getenv("SystemRoot")
		if root == "" {
			root = `C:\Windows`
		}
		dirs = append(dirs, filepath.Join(root, "System32"), root)
	} else {
		if goos == "darwin" {
			dirs = append(dirs, "/opt/homebrew/bin")
		}
		dirs = append(dirs, "/usr/local/bin", "/usr/bin", "/bin")
	}
	var out []string
	for _, d := range dirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return strings.Join(out, sep)
}
