// Command toolc compiles LLM tool contracts written in CUE, checks them
// against the rules that keep tools reliable, and projects, serves and
// hot-reloads them.
//
// Run `toolc help` for the commands and `toolc help COMMAND` for one's
// flags: both are generated from the flag sets, so they list every flag.
//
// The commands are flags in, package calls out: each parses its flags,
// calls the packages that do the work, and returns an error; run prints
// it once and exits with the status it carries (exitError). Exit status:
// 0 when there is no error (warnings allowed), 1 when a contract has
// errors or (diff) a change breaks the lock, 2 for usage or I/O problems.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/toolc/toolc/clientconfig"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/cliflag"
	"github.com/toolc/toolc/internal/editdist"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/memguard"
	"github.com/toolc/toolc/internal/procsec"
)

// Exit statuses, pinned by the design.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// exitError is an error that decides toolc's exit status: exitFail for
// contract errors and breaking changes, exitUsage for usage and I/O
// problems. Commands return errors and never exit; run prints the message
// once, after "toolc COMMAND: ", and exits with the status. An error that
// is not an exitError is an I/O problem (exitUsage). An exitError without
// a message only sets the status: what went wrong is printed already (the
// diagnostics, or the flag package's complaint).
type exitError struct {
	status int
	err    error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.status)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr makes err a usage or I/O problem: exit status 2.
func usageErr(err error) error { return &exitError{exitUsage, err} }

// usagef is usageErr(fmt.Errorf(format, args...)).
func usagef(format string, args ...any) error { return usageErr(fmt.Errorf(format, args...)) }

// failf is a contract problem: exit status 1.
func failf(format string, args ...any) error {
	return &exitError{exitFail, fmt.Errorf(format, args...)}
}

// exitWith is the error that exits with status, having printed nothing
// more: nil for exitOK.
func exitWith(status int) error {
	if status == exitOK {
		return nil
	}
	return &exitError{status: status}
}

// bareError is a message that run prints as it stands, without "toolc
// COMMAND: " before it: a usage line.
type bareError string

func (b bareError) Error() string { return string(b) }

// usageLineErr is the error of a command given arguments it does not take:
// its usage line, and exit status 2.
func usageLineErr(fs *flag.FlagSet) error {
	return &exitError{exitUsage, bareError("usage: toolc " + usageLine(fs))}
}

// exitStatus is the status with which toolc exits after err, having
// printed its message (if it has one) to w after "toolc CMD: ", through
// the one sanitiser: a message may quote a file name or contract text.
func exitStatus(w io.Writer, cmd string, err error) int {
	if err == nil {
		return exitOK
	}
	status := exitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		status = ee.status
		if ee.err == nil && ee == err {
			return status
		}
	}
	msg := "toolc " + cmd + ": " + err.Error()
	var bare bareError
	if errors.As(err, &bare) {
		msg = err.Error()
	}
	fmt.Fprintln(w, diag.Printable(msg))
	return status
}

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name string
	// synopsis is the usage line after the name, in the form DESIGN.md
	// pins: alternatives and positional arguments. {flags} marks where the
	// flags it does not mention go; cliflag writes them from the flag
	// set, so that no flag can be missing from the usage.
	synopsis string
	doc      string // what the command does, one line
	run      func(e env, args []string) error
	// sub says that the first argument names a subcommand (gen go), which
	// is part of the name that messages start with.
	sub bool
	// rawStderr says that standard error carries the output of the
	// command's handlers, which toolc passes on as they wrote it; the
	// other commands' standard error goes through diag.Printable.
	rawStderr bool
}

func commands() []command {
	return []command{
		{name: "check", synopsis: "[--format text|json|github] {flags} [PATTERN...]", doc: "Check the contracts against every rule.", run: runCheck},
		{name: "rules", synopsis: "[--format text|json|markdown] {flags}", doc: "List the rules that check applies.", run: runRules},
		{name: "init", synopsis: "{flags} DIR", doc: "Write a new project: a contract, its handler and a CUE module.", run: runInit},
		{name: "build", synopsis: "[-o FILE] {flags} [PATTERN...]", doc: "Compile the contracts into a catalog file.", run: runBuild},
		{name: "bundle", synopsis: "-o DIR [--goos OS --goarch ARCH] {flags} [PATTERN...]", doc: "Write a bundle: the catalog, each handler built for a platform, and their sha256 sums, for serve --bundle.", run: runBundle},
		{name: "serve", synopsis: "[--stdio | --http ADDR] [--token T] {flags} [--bundle DIR | --catalog FILE | PATTERN...]", doc: "Serve the tools over MCP and the function-call API.", run: runServe, rawStderr: true},
		{name: "dev", synopsis: "[--stdio | --http ADDR] [--token T] {flags} [PATTERN...]", doc: "Serve the tools, and rebuild and reload them as their files change.", run: runDev, rawStderr: true},
		{name: "call", synopsis: "{flags} [--catalog FILE | PATTERN...] TOOL [JSON]", doc: "Call one tool and print its result; JSON arguments from the command line or stdin.", run: runCall, rawStderr: true},
		{name: "export", synopsis: "--format openai-chat|openai-responses|anthropic|gemini|bedrock|mcp [--strict] [--tools a,b] {flags} [--catalog FILE | PATTERN...]", doc: "Print the tool definitions in a model provider's format.", run: runExport},
		{name: "import", synopsis: "mcp [--out DIR] {flags} (-- COMMAND [ARG...] | --url URL)", doc: "Write a contract package, with its upstream block and toolc.lock, for an existing MCP server's tools.", run: runImport, sub: true, rawStderr: true},
		{name: "lock", synopsis: "{flags} [PATTERN...]", doc: "Record the contracts in toolc.lock, accepting every change since.", run: runLock},
		{name: "diff", synopsis: "[--against FILE|GIT-REF | --upstream] [--format text|json|github] {flags} [PATTERN...]", doc: "List the changes since toolc.lock, a file or a git revision, and which break it; or, with --upstream, how upstream servers differ from their contracts.", run: runDiff},
		{name: "gen", synopsis: "go [--check] {flags} [PATTERN...]", doc: "Generate each contract's Go types and interface into its handler directory.", run: runGen, sub: true},
		{name: "health", synopsis: "{flags} [URL]", doc: "Ask a server's /healthz whether it serves: exit 0 if so, 1 if not (a container's health check).", run: runHealth},
		{name: "install", synopsis: clientconfig.IDs() + " {flags} [--bundle DIR | PATTERN...]", doc: "Add the server to the MCP configuration of a desktop client, with absolute paths and the environment it needs.", run: runInstall, sub: true},
		{name: "version", synopsis: "{flags}", doc: "Print toolc's version, revision and Go version.", run: runVersion},
		{name: "help", synopsis: "{flags} [COMMAND]", doc: "List the commands, or say what one command and each of its flags do.", run: runHelp},
	}
}

func main() {
	// Before anything reads a secret or starts a process: a handler must
	// not find $TOOLC_TOKEN in /proc/$PPID/environ.
	if err := procsec.Seal(); err != nil {
		fmt.Fprintf(os.Stderr, "toolc: warning: the processes toolc starts may read its environment: %v\n", err)
	}
	stop := watchMemory(os.Args[1:], os.Stderr)
	status := run(os.Args[1:], env{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(status)
}

// watchMemory bounds the memory of the commands that only compile
// contracts, whose memory a contract decides (see memguard): past the
// limit, $TOOLC_MAX_MEMORY or memguard.DefaultLimit, toolc says so and
// exits 2. serve and dev, whose memory their clients decide and which the
// limits of HTTP serving bound, are not watched.
func watchMemory(args []string, stderr io.Writer) (stop func()) {
	if len(args) == 0 || !slices.Contains([]string{"check", "build", "lock", "diff", "export", "gen", "call"}, args[0]) {
		return func() {}
	}
	limit, err := memguard.Limit(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "toolc %s: $TOOLC_MAX_MEMORY: %v\n", args[0], err)
		os.Exit(exitUsage)
	}
	return memguard.Watch(uint64(limit), func(used uint64) {
		fmt.Fprintf(stderr, "toolc %s: stopped: the contracts took more than %s of memory to evaluate (%d MiB in use); a contract computes something too large, such as a comprehension over a huge list.Range (set TOOLC_MAX_MEMORY to raise the limit, as in TOOLC_MAX_MEMORY=8GiB)\n",
			args[0], inputfile.FormatSize(limit), used>>20)
		os.Exit(exitUsage)
	})
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
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(e.stderr, "toolc: unknown command %q%s\n", name, didYouMean(name))
		printUsage(e.stderr)
		return exitUsage
	}
	if c.sub && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		name += " " + args[1]
	}
	if !c.rawStderr {
		// Every line on standard error may carry a file name or contract
		// text, from any package: clean them all in one place.
		pw := diag.NewPrintableWriter(e.stderr)
		defer pw.Flush()
		e.stderr = pw
	}
	return exitStatus(e.stderr, name, c.run(e, args[1:]))
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// didYouMean suggests the command closest to an unknown name, when one is
// close: `; did you mean "check"?`.
func didYouMean(name string) string {
	if len(name) > 32 {
		return "" // no command is that long; and the distance costs len(name) x len(command)
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	// A typo or two, not another word.
	if best := editdist.Closest(name, names, 3); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "toolc compiles and checks LLM tool contracts written in CUE.\n\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "\ttoolc %s\n\t    %s\n", commandUsage(c), c.doc)
	}
	fmt.Fprintln(w, "\nPatterns are Go-style (./..., ./examples/weather); the default is ./...")
	fmt.Fprintln(w, "Run toolc help COMMAND (or toolc COMMAND -h) for what each flag does.")
	fmt.Fprintln(w, "Exit status: 0 no errors, 1 contract errors or breaking changes, 2 usage or I/O problems.")
}

// commandUsage is a command's usage line. The command makes it from its
// own flag set, when asked for -h: every command answers -h before it
// does anything else, so asking is free, and the line is the one that
// `toolc COMMAND -h` prints.
func commandUsage(c command) string {
	var out strings.Builder
	c.run(env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &out}, []string{"-h"})
	line, _, _ := strings.Cut(out.String(), "\n")
	return strings.TrimPrefix(line, "usage: toolc ")
}

// runHelp lists the commands, or prints what `toolc COMMAND -h` does, to
// standard output: the usage line, what the command does, and each flag.
func runHelp(e env, args []string) error {
	fs := newFlags(e, "help")
	rest, err := parseFlags(fs, args)
	switch {
	case err != nil:
		return err
	case len(rest) == 0:
		printUsage(e.stdout)
		return nil
	case len(rest) > 1:
		return usageLineErr(fs)
	}
	c, ok := lookup(rest[0])
	if !ok {
		return usagef("unknown command %q%s", rest[0], didYouMean(rest[0]))
	}
	c.run(env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: e.stdout}, []string{"-h"})
	return nil
}

// newFlags returns a flag set that reports to stderr and, on -h, prints
// the command's usage line, what it does, and each of its flags.
func newFlags(e env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		c, _ := lookup(name)
		fmt.Fprintf(e.stderr, "usage: toolc %s\n\n%s\n", usageLine(fs), c.doc)
		if hasFlags(fs) {
			fmt.Fprintln(e.stderr, "\nFlags:")
			cliflag.PrintDefaults(e.stderr, fs, c.synopsis)
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// usageLine is the usage line of the command whose flag set fs is.
func usageLine(fs *flag.FlagSet) string {
	c, _ := lookup(fs.Name())
	return cliflag.UsageLine(fs, c.synopsis)
}

// parseFlags parses flags anywhere among the arguments (see cliflag.Parse).
// The error stops the command: -h (status 0) or a bad flag (status 2),
// both of which the flag package has printed already.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	rest, err := cliflag.Parse(fs, args)
	switch {
	case cliflag.IsHelp(err):
		return nil, &exitError{status: exitOK}
	case err != nil:
		return nil, &exitError{status: exitUsage}
	}
	return rest, nil
}

// parseNone parses the flags of a command that takes no other arguments.
func parseNone(fs *flag.FlagSet, args []string) error {
	rest, err := parseFlags(fs, args)
	if err == nil && len(rest) > 0 {
		err = usageLineErr(fs)
	}
	return err
}
