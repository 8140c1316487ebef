//go:build !serveonly

package main

import (
	"os"
	"runtime"
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
	toolc, err := clientconfig.Executable()
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
		opts.Go = clientconfig.GoCommand()
	}
	if *name == "" {
		*name = clientconfig.DefaultName(wd, *bundle)
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
	res.Report(e.stdout, client, server)
	return nil
}
