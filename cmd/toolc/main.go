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
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/toolc/toolc/internal/cli"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/memguard"
	"github.com/toolc/toolc/internal/procsec"
)

// Exit statuses, pinned by the design.
const (
	exitOK    = cli.OK
	exitFail  = cli.Fail
	exitUsage = cli.Usage
)

// exitError is the error that carries the exit status (cli.Error).
type exitError = cli.Error

// bareError is a message printed as it stands: a usage line.
type bareError = cli.Bare

// usageErr makes err a usage or I/O problem: exit status 2.
func usageErr(err error) error { return cli.UsageErr(err) }

// usagef is usageErr(fmt.Errorf(format, args...)).
func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }

// failf is a contract problem: exit status 1.
func failf(format string, args ...any) error { return cli.Failf(format, args...) }

// exitWith is the error that exits with status, having printed nothing
// more: nil for exitOK.
func exitWith(status int) error { return cli.Exit(status) }

// exitStatus is the status with which toolc exits after err, having
// printed its message (if it has one) to w after "toolc CMD: ".
func exitStatus(w io.Writer, cmd string, err error) int { return cli.Status(w, "toolc "+cmd, err) }

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// with makes a command's run function, written for env, a cli.Command's.
func with(run func(e env, args []string) error) func(cli.Env, []string) error {
	return func(e cli.Env, args []string) error { return run(env{e.Stdin, e.Stdout, e.Stderr}, args) }
}

// program is toolc: its commands, and the lines around their list.
func program() *cli.Program {
	return &cli.Program{
		Name:     "toolc",
		Intro:    intro,
		Outro:    slices.Concat(patternsLine, []string{"Run toolc help COMMAND (or toolc COMMAND -h) for what each flag does.", "Exit status: 0 no errors, 1 contract errors or breaking changes, 2 usage or I/O problems."}),
		Commands: commands,
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

func run(args []string, e env) int {
	if len(args) > 0 && (args[0] == "-version" || args[0] == "--version") {
		args = append([]string{"version"}, args[1:]...)
	}
	return program().Run(args, cli.Env{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr})
}

// runHelp lists the commands, or prints what `toolc COMMAND -h` does, to
// standard output: the usage line, what the command does, and each flag.
func runHelp(e env, args []string) error {
	return program().Help(cli.Env{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr}, newFlags(e, "help"), args)
}

// newFlags returns a flag set that reports to stderr and, on -h, prints
// the command's usage line, what it does, and each of its flags.
func newFlags(e env, name string) *flag.FlagSet { return program().NewFlags(e.stderr, name) }

// usageLine is the usage line of the command whose flag set fs is.
func usageLine(fs *flag.FlagSet) string { return program().UsageLine(fs) }

// usageLineErr is the error of a command given arguments it does not take:
// its usage line, and exit status 2.
func usageLineErr(fs *flag.FlagSet) error { return program().UsageLineErr(fs) }

// parseFlags parses flags anywhere among the arguments (see cli.Parse).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) { return cli.Parse(fs, args) }

// plural is "1 noun" or "N nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// parseNone parses the flags of a command that takes no other arguments.
func parseNone(fs *flag.FlagSet, args []string) error {
	rest, err := parseFlags(fs, args)
	if err == nil && len(rest) > 0 {
		err = usageLineErr(fs)
	}
	return err
}
