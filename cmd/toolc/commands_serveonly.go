//go:build serveonly

// A toolc built with -tags serveonly serves bundles and catalogs, and
// links no CUE: it is the toolc of a container or a machine that serves
// what CI built (docs/deploying.md). The compiler and its packages are
// half of a full toolc's code, and what a process maps of its binary is
// most of its memory at idle (BENCHMARKS.md, Memory at idle).

package main

import (
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/cli"
)

// intro is the first line of toolc help.
const intro = "toolc serves LLM tool contracts compiled into bundles and catalogs. " +
	"This toolc was built with -tags serveonly: it compiles no contracts; check, build, bundle, dev and the other commands that do are in a toolc built without it."

// patternsLine is empty: this toolc takes no patterns.
var patternsLine []string

func commands() []cli.Command {
	return []cli.Command{
		{Name: "serve", Synopsis: "[--stdio | --http ADDR] [--token T] {flags} [--bundle DIR | --catalog FILE]", Doc: "Serve the tools over MCP and the function-call API.", Run: with(runServe), RawStderr: true},
		{Name: "call", Synopsis: "{flags} [--catalog FILE] TOOL [JSON]", Doc: "Call one tool and print its result; JSON arguments from the command line or stdin.", Run: with(runCall), RawStderr: true},
		{Name: "health", Synopsis: "{flags} [URL]", Doc: "Ask a server's /healthz whether it serves: exit 0 if so, 1 if not (a container's health check).", Run: with(runHealth)},
		{Name: "version", Synopsis: "{flags}", Doc: "Print toolc's version, revision and Go version.", Run: with(runVersion)},
		{Name: "help", Synopsis: "{flags} [COMMAND]", Doc: "List the commands, or say what one command and each of its flags do.", Run: with(runHelp)},
	}
}

// loadCatalog reads the catalog file; this toolc compiles no patterns.
func loadCatalog(_ env, cmd, file string, patterns []string) (*catalog.Catalog, error) {
	if file == "" {
		return nil, usagef("this toolc was built with -tags serveonly and compiles no contracts: give --bundle DIR or --catalog FILE (toolc bundle or toolc build writes them), or use a toolc built without the tag")
	}
	if len(patterns) > 0 {
		return nil, usagef("give --catalog or patterns, not both")
	}
	return catalog.LoadFile(file)
}
