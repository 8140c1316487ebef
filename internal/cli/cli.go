// Package cli is what a program of subcommands needs besides their flags
// (package cliflag) and their work: a Program dispatches to its Commands,
// answers help with each command's usage from its own flag set, suggests
// the command a mistyped name was probably meant to be, and turns the
// error a command returns into one printed message and an exit status.
//
// A command is flags in, package calls out: it parses its flags
// (Program.NewFlags, Parse), calls the packages that do the work, and
// returns an error, never exits. An Error carries the exit status;
// Program.Run prints the message once, after "NAME COMMAND: ", and
// returns the status for main to exit with:
//
//	func main() { os.Exit(program().Run(os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})) }
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/cliflag"
	"github.com/toolc/toolc/internal/editdist"
)

// Exit statuses: no error (warnings allowed); a failure of what the
// command checks or runs (contract errors, breaking changes); usage and
// I/O problems.
const (
	OK    = 0
	Fail  = 1
	Usage = 2
)

// Error is an error that decides the exit status. An error that is not
// an Error is an I/O problem (Usage). An Error without Err only sets the
// status: what went wrong is printed already (the diagnostics, or the
// flag package's complaint).
type Error struct {
	Status int
	Err    error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Status)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// UsageErr makes err a usage or I/O problem: exit status 2.
func UsageErr(err error) error { return &Error{Usage, err} }

// Usagef is UsageErr(fmt.Errorf(format, args...)).
func Usagef(format string, args ...any) error { return UsageErr(fmt.Errorf(format, args...)) }

// Failf is a failure of what the command checks or runs: exit status 1.
func Failf(format string, args ...any) error { return &Error{Fail, fmt.Errorf(format, args...)} }

// Exit is the error that exits with status, having printed nothing
// more: nil for OK.
func Exit(status int) error {
	if status == OK {
		return nil
	}
	return &Error{Status: status}
}

// Bare is a message that is printed as it stands, without "NAME
// COMMAND: " before it: a usage line.
type Bare string

func (b Bare) Error() string { return string(b) }

// Status is the status to exit with after err, having printed its message
// (if it has one) to w after "prefix: ", through diag.Printable: a message
// may quote a file name or contract text.
func Status(w io.Writer, prefix string, err error) int {
	if err == nil {
		return OK
	}
	status := Usage
	var ee *Error
	if errors.As(err, &ee) {
		status = ee.Status
		if ee.Err == nil && ee == err {
			return status
		}
	}
	msg := prefix + ": " + err.Error()
	var bare Bare
	if errors.As(err, &bare) {
		msg = err.Error()
	}
	fmt.Fprintln(w, diag.Printable(msg))
	return status
}

// Env is where a command reads and writes.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Command is one subcommand of a Program.
type Command struct {
	Name string
	// Synopsis is the usage line after the name: alternatives and
	// positional arguments. {flags} marks where the flags it does not
	// mention go; cliflag writes them from the flag set, so that no flag
	// can be missing from the usage.
	Synopsis string
	Doc      string // what the command does, one line
	Run      func(e Env, args []string) error
	// Sub says that the first argument names a subcommand (gen go), which
	// is part of the name that messages start with.
	Sub bool
	// RawStderr says that standard error carries the output of the
	// command's handlers, passed on as they wrote it; the other commands'
	// standard error goes through diag.Printable.
	RawStderr bool
}

// Program is a program of subcommands.
type Program struct {
	// Name is the program's name, which messages start with.
	Name string
	// Intro is the first line of the command list; Outro, the lines
	// after it.
	Intro string
	Outro []string
	// Commands lists the commands, in the order help lists them. It is a
	// function, called when needed, so that a command may refer to the
	// program it belongs to.
	Commands func() []Command
}

// Run runs the command that args name, and returns the status to exit
// with, having printed what went wrong, once. A panic is an internal
// error, said as such, never a Go stack trace.
func (p *Program) Run(args []string, e Env) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.Stderr, "%s: internal error: %v\nPlease report this at https://github.com/toolc/toolc/issues with the command that caused it.\n", p.Name, r)
			status = Usage
		}
	}()
	if len(args) == 0 {
		p.printUsage(e.Stderr)
		return Usage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		p.printUsage(e.Stdout)
		return OK
	}
	c, ok := p.lookup(name)
	if !ok {
		fmt.Fprintf(e.Stderr, "%s: unknown command %q%s\n", p.Name, name, p.didYouMean(name))
		p.printUsage(e.Stderr)
		return Usage
	}
	if c.Sub && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		name += " " + args[1]
	}
	if !c.RawStderr {
		// Every line on standard error may carry a file name or contract
		// text, from any package: clean them all in one place.
		pw := diag.NewPrintableWriter(e.Stderr)
		defer pw.Flush()
		e.Stderr = pw
	}
	return Status(e.Stderr, p.Name+" "+name, c.Run(e, args[1:]))
}

func (p *Program) lookup(name string) (Command, bool) {
	for _, c := range p.Commands() {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// didYouMean suggests the command closest to an unknown name, when one is
// close: `; did you mean "check"?`.
func (p *Program) didYouMean(name string) string {
	if len(name) > 32 {
		return "" // no command is that long; and the distance costs len(name) x len(command)
	}
	var names []string
	for _, c := range p.Commands() {
		names = append(names, c.Name)
	}
	// A typo or two, not another word.
	if best := editdist.Closest(name, names, 3); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

func (p *Program) printUsage(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nUsage:\n", p.Intro)
	for _, c := range p.Commands() {
		fmt.Fprintf(w, "\t%s %s\n\t    %s\n", p.Name, p.commandUsage(c), c.Doc)
	}
	fmt.Fprintln(w)
	for _, l := range p.Outro {
		fmt.Fprintln(w, l)
	}
}

// commandUsage is a command's usage line. The command makes it from its
// own flag set, when asked for -h: every command answers -h before it
// does anything else, so asking is free, and the line is the one that
// `NAME COMMAND -h` prints.
func (p *Program) commandUsage(c Command) string {
	var out strings.Builder
	c.Run(Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &out}, []string{"-h"})
	line, _, _ := strings.Cut(out.String(), "\n")
	return strings.TrimPrefix(line, "usage: "+p.Name+" ")
}

// Help is the run of a help command: it lists the commands, or prints
// what `NAME COMMAND -h` does, to standard output: the usage line, what
// the command does, and each flag. fs is the help command's flag set.
func (p *Program) Help(e Env, fs *flag.FlagSet, args []string) error {
	rest, err := Parse(fs, args)
	switch {
	case err != nil:
		return err
	case len(rest) == 0:
		p.printUsage(e.Stdout)
		return nil
	case len(rest) > 1:
		return p.UsageLineErr(fs)
	}
	c, ok := p.lookup(rest[0])
	if !ok {
		return Usagef("unknown command %q%s", rest[0], p.didYouMean(rest[0]))
	}
	c.Run(Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: e.Stdout}, []string{"-h"})
	return nil
}

// NewFlags returns the flag set of command name, which reports to stderr
// and, on -h, prints the command's usage line, what it does, and each of
// its flags.
func (p *Program) NewFlags(stderr io.Writer, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		c, _ := p.lookup(name)
		fmt.Fprintf(stderr, "usage: %s %s\n\n%s\n", p.Name, p.UsageLine(fs), c.Doc)
		if hasFlags(fs) {
			fmt.Fprintln(stderr, "\nFlags:")
			cliflag.PrintDefaults(stderr, fs, c.Synopsis)
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// UsageLine is the usage line, after the program's name, of the command
// whose flag set fs is.
func (p *Program) UsageLine(fs *flag.FlagSet) string {
	c, _ := p.lookup(fs.Name())
	return cliflag.UsageLine(fs, c.Synopsis)
}

// UsageLineErr is the error of a command given arguments it does not
// take: its usage line, and exit status 2.
func (p *Program) UsageLineErr(fs *flag.FlagSet) error {
	return &Error{Usage, Bare("usage: " + p.Name + " " + p.UsageLine(fs))}
}

// Parse parses flags anywhere among the arguments (see cliflag.Parse).
// The error stops the command: -h (status 0) or a bad flag (status 2),
// both of which the flag package has printed already.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	rest, err := cliflag.Parse(fs, args)
	switch {
	case cliflag.IsHelp(err):
		return nil, &Error{Status: OK}
	case err != nil:
		return nil, &Error{Status: Usage}
	}
	return rest, nil
}
