//go:build !serveonly

package main

import (
	"github.com/toolc/toolc/clientconfig"
	"github.com/toolc/toolc/internal/cli"
)

// intro is the first line of toolc help.
const intro = "toolc compiles and checks LLM tool contracts written in CUE."

// patternsLine is the line of toolc help on the patterns that name
// contracts.
var patternsLine = []string{"Patterns are Go-style (./..., ./examples/weather); the default is ./..."}

func commands() []cli.Command {
	return []cli.Command{
		{Name: "check", Synopsis: "[--format text|json|github] {flags} [PATTERN...]", Doc: "Check the contracts against every rule.", Run: with(runCheck)},
		{Name: "rules", Synopsis: "[--format text|json|markdown] {flags}", Doc: "List the rules that check applies.", Run: with(runRules)},
		{Name: "init", Synopsis: "{flags} DIR", Doc: "Write a new project: a contract, its handler and a CUE module.", Run: with(runInit)},
		{Name: "build", Synopsis: "[-o FILE] {flags} [PATTERN...]", Doc: "Compile the contracts into a catalog file.", Run: with(runBuild)},
		{Name: "bundle", Synopsis: "-o DIR [--goos OS --goarch ARCH] {flags} [PATTERN...]", Doc: "Write a bundle: the catalog, each handler built for a platform, and their sha256 sums, for serve --bundle.", Run: with(runBundle)},
		{Name: "serve", Synopsis: "[--stdio | --http ADDR] [--token T] {flags} [--bundle DIR | --catalog FILE | PATTERN...]", Doc: "Serve the tools over MCP and the function-call API.", Run: with(runServe), RawStderr: true},
		{Name: "dev", Synopsis: "[--stdio | --http ADDR] [--token T] {flags} [PATTERN...]", Doc: "Serve the tools, and rebuild and reload them as their files change.", Run: with(runDev), RawStderr: true},
		{Name: "call", Synopsis: "{flags} [--catalog FILE | PATTERN...] TOOL [JSON]", Doc: "Call one tool and print its result; JSON arguments from the command line or stdin.", Run: with(runCall), RawStderr: true},
		{Name: "export", Synopsis: "--format openai-chat|openai-responses|anthropic|gemini|bedrock|mcp [--strict] [--tools a,b] {flags} [--catalog FILE | PATTERN...]", Doc: "Print the tool definitions in a model provider's format.", Run: with(runExport)},
		{Name: "import", Synopsis: "mcp [--out DIR] {flags} (-- COMMAND [ARG...] | --url URL)", Doc: "Write a contract package, with its upstream block and toolc.lock, for an existing MCP server's tools.", Run: with(runImport), Sub: true, RawStderr: true},
		{Name: "lock", Synopsis: "{flags} [PATTERN...]", Doc: "Record the contracts in toolc.lock, accepting every change since.", Run: with(runLock)},
		{Name: "diff", Synopsis: "[--against FILE|GIT-REF | --upstream] [--format text|json|github] {flags} [PATTERN...]", Doc: "List the changes since toolc.lock, a file or a git revision, and which break it; or, with --upstream, how upstream servers differ from their contracts.", Run: with(runDiff)},
		{Name: "gen", Synopsis: "go [--check] {flags} [PATTERN...]", Doc: "Generate each contract's Go types and interface into its handler directory.", Run: with(runGen), Sub: true},
		{Name: "health", Synopsis: "{flags} [URL]", Doc: "Ask a server's /healthz whether it serves: exit 0 if so, 1 if not (a container's health check).", Run: with(runHealth)},
		{Name: "install", Synopsis: clientconfig.IDs() + " {flags} [--bundle DIR | PATTERN...]", Doc: "Add the server to the MCP configuration of a desktop client, with absolute paths and the environment it needs.", Run: with(runInstall), Sub: true},
		{Name: "version", Synopsis: "{flags}", Doc: "Print toolc's version, revision and Go version.", Run: with(runVersion)},
		{Name: "help", Synopsis: "{flags} [COMMAND]", Doc: "List the commands, or say what one command and each of its flags do.", Run: with(runHelp)},
	}
}
