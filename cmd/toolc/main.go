// Command toolc compiles LLM tool contracts written in CUE, checks them
// against the rules that keep tools reliable, and (in later commands)
// projects, serves and hot-reloads them.
//
// Usage:
//
//	toolc check [--format text|json|github] [PATTERN...]
//	toolc rules [--format text|json|markdown]
//	toolc init [--sdk DIR] DIR
//	toolc build [-o FILE] [PATTERN...]
//	toolc export --format openai-chat|openai-responses|anthropic|gemini|bedrock|mcp [--strict] [--tools a,b] [--catalog FILE | PATTERN...]
//	toolc serve [--stdio | --http ADDR] [--catalog FILE | PATTERN...]
//	toolc call  [--catalog FILE | PATTERN...] TOOL [JSON]
//	toolc dev   [--stdio | --http ADDR] [--poll DURATION] [PATTERN...]
//	toolc lock  [PATTERN...]
//	toolc diff  [--against FILE|GIT-REF] [--format text|json|github] [PATTERN...]
//	toolc gen go [--check] [PATTERN...]
//	toolc version
//
// Exit status: 0 when there is no error (warnings allowed), 1 when a
// contract has errors or (diff) a change breaks the lock, 2 for usage or
// I/O problems.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit statuses, pinned by the design.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name  string
	usage string
	run   func(e env, args []string) int
}

func commands() []command {
	return []command{
		{"check", "check [--format text|json|github] [PATTERN...]", runCheck},
		{"rules", "rules [--format text|json|markdown]", runRules},
		{"init", "init [--sdk DIR] DIR", runInit},
		{"build", "build [-o FILE] [PATTERN...]", runBuild},
		{"serve", "serve [--stdio | --http ADDR] [--token T] [--insecure] [--allow-origin O] [--stateless] [--state-key-file FILE] [--catalog FILE | PATTERN...]", runServe},
		{"dev", "dev [--stdio | --http ADDR] [--token T] [--insecure] [--state-key-file FILE] [--poll DURATION] [PATTERN...]", runDev},
		{"call", "call [--catalog FILE | PATTERN...] TOOL [JSON]", runCall},
		{"export", "export --format openai-chat|openai-responses|anthropic|gemini|bedrock|mcp [--strict] [--tools a,b] [--catalog FILE | PATTERN...]", runExport},
		{"lock", "lock [PATTERN...]", runLock},
		{"diff", "diff [--against FILE|GIT-REF] [--format text|json|github] [PATTERN...]", runDiff},
		{"gen", "gen go [--check] [PATTERN...]", runGen},
		{"version", "version", runVersion},
		{"help", "help [COMMAND]", runHelp},
	}
}

func main() {
	os.Exit(run(os.Args[1:], env{os.Stdin, os.Stdout, os.Stderr}))
}

func run(args []string, e env) (status int) {
	defer func() {
		// A bug must not show a user a Go stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "toolc: internal error: %v\nPlease report this at https://github.com/toolc/toolc/issues with the command that caused it.\n", r)
			status = exitUsage
		}
	}()
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		printUsage(e.stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "toolc: unknown command %q\n", name)
	printUsage(e.stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "toolc compiles and checks LLM tool contracts written in CUE.\n\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "\ttoolc %s\n", c.usage)
	}
	fmt.Fprintln(w, "\nPatterns are Go-style (./..., ./examples/weather); the default is ./...")
	fmt.Fprintln(w, "Exit status: 0 no errors, 1 contract errors or breaking changes, 2 usage or I/O problems.")
}

func runHelp(e env, args []string) int {
	if len(args) == 1 {
		for _, c := range commands() {
			if c.name == args[0] {
				fmt.Fprintf(e.stdout, "usage: toolc %s\n", c.usage)
				return exitOK
			}
		}
		fmt.Fprintf(e.stderr, "toolc help: unknown command %q\n", args[0])
		return exitUsage
	}
	printUsage(e.stdout)
	return exitOK
}

// newFlags returns a flag set that reports to stderr and prints the
// command's usage line on -h.
func newFlags(e env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		for _, c := range commands() {
			if c.name == name {
				fmt.Fprintf(e.stderr, "usage: toolc %s\n", c.usage)
			}
		}
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses flags anywhere among the arguments, so that
// `toolc check ./... --format json` works as well as the usual order.
// It returns the positional arguments, or an exit status when parsing
// stopped the command.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		args = fs.Args()
		i := 0
		for i < len(args) && (!strings.HasPrefix(args[i], "-") || args[i] == "-") {
			i++
		}
		positional = append(positional, args[:i]...)
		if i == len(args) {
			return positional, 0, true
		}
		if args[i] == "--" {
			return append(positional, args[i+1:]...), 0, true
		}
		args = args[i:]
	}
}
