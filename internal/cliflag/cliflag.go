// Package cliflag is the flag handling of toolc's commands: flags anywhere
// among the arguments (Parse), and a usage line and a flag list written
// from the flag set (UsageLine, PrintDefaults), so that no flag can be
// missing from the usage. Both spell each flag as the command's synopsis
// does, "--catalog FILE", rather than as package flag does, "-catalog
// string", so that the line, the list and docs/cli.md read alike.
//
// A synopsis is the usage line after the command's name, with its
// alternatives and positional arguments: "[--format text|json] {flags}
// [PATTERN...]". {flags} marks where the flags it does not mention go.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Parse parses flags anywhere among the arguments, so that `toolc check
// ./... --format json` works as well as the usual order, and returns the
// positional arguments. "--" ends the flags. The error is flag.ErrHelp for
// -h, or the flag set's own, which it has printed.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
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

// IsHelp reports whether err is Parse's answer to -h.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

// UsageLine is the usage line of the command whose flag set fs is: its
// name and synopsis, with every flag that the synopsis does not mention
// written in at {flags}, in the flag set's (alphabetical) order.
func UsageLine(fs *flag.FlagSet, synopsis string) string {
	var extra []string
	fs.VisitAll(func(f *flag.Flag) {
		if !mentions(synopsis, f.Name) {
			extra = append(extra, flagSynopsis(f))
		}
	})
	line := strings.Replace(synopsis, "{flags}", strings.Join(extra, " "), 1)
	return strings.Join(strings.Fields(fs.Name()+" "+line), " ")
}

// PrintDefaults lists the flags of fs, each as "--name ARG", with its
// usage text and its default, where that is not its type's zero value and
// the usage text does not say it: a default taken from the environment,
// "(default $TOOLC_TOKEN)", may be a secret, which -h and every usage
// error would print.
func PrintDefaults(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fs.VisitAll(func(f *flag.Flag) {
		head := Dashes(f.Name) + f.Name
		if arg := flagArg(synopsis, f); arg != "" {
			head += " " + arg
		}
		_, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  %s\n    \t%s", head, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !zeroDefault(f) && !strings.Contains(usage, "(default ") {
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
	if isBool(f) {
		return ""
	}
	words := strings.FieldsFunc(synopsis, func(r rune) bool { return r == ' ' || r == '[' || r == ']' || r == '(' || r == ')' })
	for i, word := range words {
		if word == Dashes(f.Name)+f.Name && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") && words[i+1] != "|" {
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

// mentions reports whether a synopsis names the flag.
func mentions(synopsis, flag string) bool {
	return slices.ContainsFunc(strings.FieldsFunc(synopsis, func(r rune) bool {
		return r == ' ' || r == '[' || r == ']' || r == '|' || r == '(' || r == ')'
	}), func(word string) bool { return word == Dashes(flag)+flag })
}

// Dashes is "-" before a one-letter flag name and "--" before a longer one.
func Dashes(name string) string {
	if len(name) == 1 {
		return "-"
	}
	return "--"
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagSynopsis is "[--name]" for a boolean flag and "[--name ARG]" for
// another, ARG being the back-quoted word of its usage text or its type.
func flagSynopsis(f *flag.Flag) string {
	if isBool(f) {
		return "[" + Dashes(f.Name) + f.Name + "]"
	}
	arg, _ := flag.UnquoteUsage(f)
	switch arg {
	case "", "value", "string":
		arg = "VALUE"
	case "int", "uint", "int64", "uint64":
		arg = "N"
	}
	return "[" + Dashes(f.Name) + f.Name + " " + strings.ToUpper(arg) + "]"
}
