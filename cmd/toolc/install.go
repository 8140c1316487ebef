package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/toolc/toolc/clientconfig"
	"github.com/toolc/toolc/compiler"
)

func runInstall(e env, args []string) error {
	fs := newFlags(e, "install")
	name := fs.String("name", "", "the server's `NAME` in the client's configuration (default: the project directory's name, or the bundle's)")
	config := fs.String("config", "", "write to `FILE`, in the client's format, instead of where the client keeps its configuration (a project's .cursor/mcp.json, Claude Code's .mcp.json, VS Code's user mcp.json)")
	bundle := fs.String("bundle", "", "serve the bundle in `DIR` (toolc bundle) instead of the contracts: no go and no sources needed")
	dev := fs.Bool("dev", false, "start toolc dev, which rebuilds and reloads as the sources change, instead of toolc serve")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageLineErr(fs)
	}
	client, ok := clientconfig.Lookup(rest[0])
	if !ok {
		return usagef("unknown client %q: toolc install configures %s", rest[0], strings.ReplaceAll(clientconfig.IDs(), "|", ", "))
	}
	patterns := rest[1:]
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	toolc, err := installedToolc()
	if err != nil {
		return err
	}
	opts := clientconfig.Options{Toolc: toolc, Dir: wd, Patterns: patterns, Bundle: *bundle, Dev: *dev, GOOS: runtime.GOOS, Getenv: os.Getenv}
	if *bundle != "" {
		if fi, err := os.Stat(*bundle); err != nil || !fi.IsDir() {
			return usagef("--bundle %s: not a directory (toolc bundle -o DIR writes one)", *bundle)
		}
	} else {
		// What the client will start must start: the contracts compile
		// now, or nothing is written.
		if _, err := compileWith(e, "install "+client.ID, compiler.Config{}, patterns); err != nil {
			return err
		}
		if opts.Go, err = exec.LookPath("go"); err == nil {
			opts.Go, err = filepath.Abs(opts.Go)
		}
		if err != nil {
			opts.Go = ""
		}
	}
	if *name == "" {
		*name = serverName(wd, *bundle)
	}
	server, err := clientconfig.NewServer(*name, opts)
	if err != nil {
		return usageErr(err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	place, err := client.Place(clientconfig.Env{GOOS: runtime.GOOS, Home: home, ProjectDir: wd, Getenv: os.Getenv}, *config)
	if err != nil {
		return err
	}
	res, err := client.Install(place, server)
	if err != nil {
		return err
	}
	switch res.Outcome {
	case clientconfig.Unchanged:
		fmt.Fprintf(e.stdout, "%s: MCP server %q is already as it would be written; nothing changed\n", res.File, server.Name)
		return nil
	case clientconfig.Added:
		fmt.Fprintf(e.stdout, "%s: added MCP server %q\n", res.File, server.Name)
	default:
		fmt.Fprintf(e.stdout, "%s: updated MCP server %q: %s changed\n", res.File, server.Name, strings.Join(res.Changed, ", "))
	}
	fmt.Fprintf(e.stdout, "\tcommand  %s\n\targs     %s\n", server.Command, strings.Join(server.Args, " "))
	keys := make([]string, 0, len(server.Env))
	for k := range server.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(e.stdout, "\tenv      %s=%s\n", k, server.Env[k])
	}
	fmt.Fprintln(e.stdout, client.Reload)
	return nil
}

// installedToolc is the absolute path of this toolc, which the client will
// start.
func installedToolc() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, goRunBuild(exe)
}

var goBuildDir = regexp.MustCompile(`^go-build[0-9]+$`)

// goRunBuild refuses go run's build of toolc, in a temporary go-buildN
// directory that is gone once it exits: a configuration that named it
// would start nothing.
func goRunBuild(exe string) error {
	for dir := filepath.Dir(exe); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if goBuildDir.MatchString(filepath.Base(dir)) {
			return errors.New("this toolc is go run's temporary build, which is gone when it exits: install toolc (go install ./cmd/toolc from a checkout) and run the installed toolc install")
		}
	}
	return nil
}

var notNameChar = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// serverName is the default name of the server: the bundle's directory
// name, or the project's, in the characters every client accepts.
func serverName(wd, bundle string) string {
	base := filepath.Base(wd)
	if bundle != "" {
		if abs, err := filepath.Abs(bundle); err == nil {
			base = filepath.Base(abs)
		}
	}
	name := strings.Trim(notNameChar.ReplaceAllString(base, "-"), "-")
	if name == "" {
		return "toolc"
	}
	return name
}
