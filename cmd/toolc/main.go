// Command toolc compiles LLM tool contracts written in CUE, checks them
// against the rules that keep tools reliable, and (in later commands)
// projects, serves and hot-reloads them.
//
// Run `toolc help` for the commands and `toolc COMMAND -h` for one's flags:
// both are generated from the flag sets, so they list every flag.
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
	"reflect"
	"slices"
	"strings"

	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/memguard"
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

// failErr makes err a contract problem: exit status 1.
func failErr(err error) error { return &exitError{exitFail, err} }

// failf is failErr(fmt.Errorf(format, args...)).
func failf(format string, args ...any) error { return failErr(fmt.Errorf(format, args...)) }

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
// printed its message (if it has one) to w after "toolc CMD: ".
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
	var bare bareError
	if errors.As(err, &bare) {
		fmt.Fprintln(w, err)
	} else {
		fmt.Fprintf(w, "toolc %s: %v\n", cmd, err)
	}
	return status
}

// statusCommand adapts a command that still returns its exit status and
// prints its own errors.
func statusCommand(run func(e env, args []string) int) func(e env, args []string) error {
	return func(e env, args []string) error { return exitWith(run(e, args)) }
}

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name string
	// synopsis is the usage line after the name, in the form DESIGN.md
	// pins: alternatives and positional arguments. {flags} marks where the
	// flags it does not mention go; usageLine writes them from the flag
	// set, so that no flag can be missing from the usage.
	synopsis string
	run      func(e env, args []string) error
	// sub says that the first argument names a subcommand (gen go), which
	// is part of the name that messages start with.
	sub bool
}

func commands() []command {
	return []command{
		{"check", "[--format text|json|github] {flags} [PATTERN...]", runCheck, false},
		{"rules", "[--format text|json|markdown] {flags}", runRules, false},
		{"init", "{flags} DIR", runInit, false},
		{"build", "[-o FILE] {flags} [PATTERN...]", runBuild, false},
		{"bundle", "-o DIR [--goos OS --goarch ARCH] {flags} [PATTERN...]", runBundle, false},
		{"serve", "[--stdio | --http ADDR] [--token T] {flags} [--bundle DIR | --catalog FILE | PATTERN...]", statusCommand(runServe), false},
		{"dev", "[--stdio | --http ADDR] [--token T] {flags} [PATTERN...]", statusCommand(runDev), false},
		{"call", "{flags} [--catalog FILE | PATTERN...] TOOL [JSON]", statusCommand(runCall), false},
		{"export", "--format openai-chat|openai-responses|anthropic|gemini|bedrock|mcp [--strict] [--tools a,b] {flags} [--catalog FILE | PATTERN...]", runExport, false},
		{"lock", "{flags} [PATTERN...]", runLock, false},
		{"diff", "[--against FILE|GIT-REF] [--format text|json|github] {flags} [PATTERN...]", runDiff, false},
		{"gen", "go [--check] {flags} [PATTERN...]", runGen, true},
		{"health", "{flags} [URL]", runHealth, false},
		{"version", "{flags}", runVersion, false},
		{"help", "{flags} [COMMAND]", runHelp, false},
	}
}

func main() {
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
	limit := int64(memguard.DefaultLimit)
	if v := os.Getenv("TOOLC_MAX_MEMORY"); v != "" {
		n, err := inputfile.ParseSize(v)
		if err != nil {
			fmt.Fprintf(stderr, "toolc %s: $TOOLC_MAX_MEMORY: %v\n", args[0], err)
			os.Exit(exitUsage)
		}
		limit = n
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
	for _, c := range commands() {
		if c.name == name {
			if c.sub && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
				name += " " + args[1]
			}
			return exitStatus(e.stderr, name, c.run(e, args[1:]))
		}
	}
	fmt.Fprintf(e.stderr, "toolc: unknown command %q\n", name)
	printUsage(e.stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "toolc compiles and checks LLM tool contracts written in CUE.\n\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "\ttoolc %s\n", commandUsage(c))
	}
	fmt.Fprintln(w, "\nPatterns are Go-style (./..., ./examples/weather); the default is ./...")
	fmt.Fprintln(w, "Run toolc COMMAND -h for what each flag does.")
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

func runHelp(e env, args []string) error {
	fs := newFlags(e, "help")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 1 {
		for _, c := range commands() {
			if c.name == rest[0] {
				fmt.Fprintf(e.stdout, "usage: toolc %s\n", commandUsage(c))
				return nil
			}
		}
		return usagef("unknown command %q", rest[0])
	}
	printUsage(e.stdout)
	return nil
}

// newFlags returns a flag set that reports to stderr and prints the
// command's usage line on -h.
func newFlags(e env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: toolc %s\n", usageLine(fs))
		printDefaults(e.stderr, fs)
	}
	return fs
}

// printDefaults lists the flags of fs as the usage line spells them,
// "--name ARG", rather than as flag.PrintDefaults does ("-name string"),
// so that the list under the line, the line and the README read alike.
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	synopsis := synopsisOf(fs.Name())
	fs.VisitAll(func(f *flag.Flag) {
		head := dashes(f.Name) + f.Name
		if arg := flagArg(synopsis, f); arg != "" {
			head += " " + arg
		}
		_, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  %s\n    \t%s", head, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !zeroDefault(f) {
			if reflect.Indirect(reflect.ValueOf(f.Value)).Kind() == reflect.String {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}

// flagArg is the word that follows the flag in the synopsis, or, for a
// flag the synopsis does not spell, the one flagSynopsis would write in;
// "" for a boolean flag.
func flagArg(synopsis string, f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	words := strings.FieldsFunc(synopsis, func(r rune) bool { return r == ' ' || r == '[' || r == ']' })
	for i, word := range words {
		if word == dashes(f.Name)+f.Name && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") && words[i+1] != "|" {
			return words[i+1]
		}
	}
	s := flagSynopsis(f)
	return strings.TrimSuffix(s[strings.LastIndex(s, " ")+1:], "]")
}

// zeroDefault reports whether f's default is its type's zero value, which
// flag.PrintDefaults leaves unsaid too.
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// synopsisOf is the synopsis of the command name, "{flags}" if it has none.
func synopsisOf(name string) string {
	for _, c := range commands() {
		if c.name == name {
			return c.synopsis
		}
	}
	return "{flags}"
}

// usageLine is the usage line of the command whose flag set fs is: its
// synopsis, with every flag that the synopsis does not mention written in
// at {flags}, in the flag set's (alphabetical) order.
func usageLine(fs *flag.FlagSet) string {
	synopsis := synopsisOf(fs.Name())
	var extra []string
	fs.VisitAll(func(f *flag.Flag) {
		if !mentions(synopsis, f.Name) {
			extra = append(extra, flagSynopsis(f))
		}
	})
	line := strings.Replace(synopsis, "{flags}", strings.Join(extra, " "), 1)
	return strings.Join(strings.Fields(fs.Name()+" "+line), " ")
}

// mentions reports whether a synopsis names the flag.
func mentions(synopsis, flag string) bool {
	return slices.ContainsFunc(strings.FieldsFunc(synopsis, func(r rune) bool {
		return r == ' ' || r == '[' || r == ']' || r == '|'
	}), func(word string) bool { return word == dashes(flag)+flag })
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-"
	}
	return "--"
}

// flagSynopsis is "[--name]" for a boolean flag and "[--name ARG]" for
// another, ARG being the back-quoted word of its usage text or its type.
func flagSynopsis(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "[" + dashes(f.Name) + f.Name + "]"
	}
	arg, _ := flag.UnquoteUsage(f)
	switch arg {
	case "", "value", "string":
		arg = "VALUE"
	case "int", "uint", "int64", "uint64":
		arg = "N"
	}
	return "[" + dashes(f.Name) + f.Name + " " + strings.ToUpper(arg) + "]"
}

// parseNone parses the flags of a command that takes no other arguments.
func parseNone(fs *flag.FlagSet, args []string) error {
	rest, err := parseFlags(fs, args)
	if err == nil && len(rest) > 0 {
		err = usageLineErr(fs)
	}
	return err
}

// parseFlags parses flags anywhere among the arguments, so that
// `toolc check ./... --format json` works as well as the usual order.
// It returns the positional arguments, or the error that stops the
// command: -h (status 0) or a bad flag (status 2), both of which the flag
// package has printed already.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &exitError{status: exitOK}
			}
			return nil, &exitError{status: exitUsage}
		}
		args = fs.Args()
		i := 0
		for i < len(args) && (!strings.HasPrefix(args[i], "-") || args[i] == "-") {
			i++
		}
		positional = append(positional, args[:i]...)
		if i == len(args) {
			return positional, nil
		}
		if args[i] == "--" {
			return append(positional, args[i+1:]...), nil
		}
		args = args[i:]
	}
}
