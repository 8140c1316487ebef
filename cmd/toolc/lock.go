//go:build !serveonly

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/toolc/toolc/baseline"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/tokens"
	"github.com/toolc/toolc/upstream"
)

// runLock records the contracts in toolc.lock, accepting every change
// since the last lock. With patterns, the lock's other services are kept
// as they were.
func runLock(e env, args []string) error {
	fs := newFlags(e, "lock")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	old, err := lock.LoadIfExists(lock.FileName)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	res, err := compiler.Compile(compiler.Config{}, patterns...)
	if err != nil {
		return err
	}
	if err := reportErrors(e, "lock", res); err != nil {
		return err
	}
	l := lock.FromCatalog(res.Catalog)
	var changes []lock.Change
	if old != nil {
		changes = compiler.Diff(res, old)
		l.Keep(old, wd, patterns)
	}
	what := fmt.Sprintf("%s, %s", plural(len(l.Services), "service"), plural(l.NumTools(), "tool"))
	wrote, err := l.Update(lock.FileName)
	if err != nil {
		return err
	}
	if !wrote {
		fmt.Fprintf(e.stderr, "toolc lock: %s is up to date: %s\n", lock.FileName, what)
		return nil
	}
	// Say what the new lock accepts, so that the change is a decision.
	accepted := lock.Accepted(changes)
	diag.Print(e.stderr, diag.Text, accepted, nil)
	if old != nil {
		what += fmt.Sprintf("; accepted %s and %s", plural(len(accepted), "breaking change"), plural(len(changes)-len(accepted), "other change"))
	}
	fmt.Fprintf(e.stderr, "toolc lock: wrote %s: %s\n", lock.FileName, what)
	return nil
}

// runDiff compares the contracts with toolc.lock, a lock or catalog file,
// or the contracts at a git revision, and prints every change.
func runDiff(e env, args []string) error {
	fs := newFlags(e, "diff")
	against := fs.String("against", "", "compare with a lock file, a catalog file or a git revision (default "+lock.FileName+")")
	formatName := fs.String("format", "text", "output format: "+strings.Join(diag.FormatNames(), ", "))
	live := fs.Bool("upstream", false, "compare each contract that has an upstream with its server's live tools instead; exit 1 on any difference")
	insecure := fs.Bool("insecure", false, "with --upstream: allow an upstream url that is plain http beyond loopback")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	format, err := diag.ParseFormat(*formatName)
	if err != nil {
		return usageErr(err)
	}
	if *live {
		if *against != "" {
			return usagef("give --against or --upstream, not both")
		}
		return diffUpstream(e, format, *insecure, patterns)
	}
	base, err := baseline.Load(context.Background(), *against, patterns)
	if err != nil {
		return err
	}
	for _, n := range base.Notes {
		fmt.Fprintf(e.stderr, "toolc diff: note: %s\n", n)
	}
	res, err := compileToCompare(e, patterns)
	if err != nil {
		return err
	}
	changes := compiler.Diff(res, base.Lock)
	// What the tools cost per request, before and after (package tokens).
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	growth, err := tokens.GrowthSince(base.Lock, res.Catalog, wd, patterns)
	if err != nil {
		return err
	}
	if err := diag.Print(e.stdout, format, lock.Diagnostics(append(changes, growth...)), nil); err != nil {
		return err
	}
	breaking, allowed, compatible := lock.Tally(changes)
	if format == diag.Text {
		if len(changes) == 0 {
			fmt.Fprintf(e.stderr, "toolc diff: against %s: no changes\n", base.Label)
		} else {
			fmt.Fprintf(e.stderr, "toolc diff: against %s: %d breaking, %d allowed by a major version bump, %d compatible\n", base.Label, breaking, allowed, compatible)
		}
		if len(growth) > 0 {
			fmt.Fprintf(e.stderr, "toolc diff: tokens: %s\n", growth[0].Message)
		}
	}
	if breaking > 0 {
		return exitWith(exitFail)
	}
	return nil
}

// diffUpstream is toolc diff --upstream: the contracts with an upstream
// against their servers' live tools, in the lock's change vocabulary.
func diffUpstream(e env, format diag.Format, insecure bool, patterns []string) error {
	res, err := compileToCompare(e, patterns)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	changes, any, err := upstream.Diff(ctx, res.Catalog, upstream.Options{Base: ".", Stderr: e.stderr, Insecure: insecure})
	if !any {
		return usagef("no contract in %s has an upstream", strings.Join(patternsOrDefault(patterns), " "))
	}
	if err != nil {
		return usageErr(err)
	}
	if err := diag.Print(e.stdout, format, lock.Diagnostics(changes), nil); err != nil {
		return err
	}
	if len(changes) == 0 {
		if format == diag.Text {
			fmt.Fprintf(e.stderr, "toolc diff: the upstream servers match their contracts\n")
		}
		return nil
	}
	if format == diag.Text {
		breaking, _, compatible := lock.Tally(changes)
		fmt.Fprintf(e.stderr, "toolc diff: the upstream servers differ from their contracts: %d breaking, %d compatible; the tools that differ are withdrawn when served\n", breaking, compatible)
	}
	return exitWith(exitFail)
}

func patternsOrDefault(p []string) []string {
	if len(p) == 0 {
		return []string{"./..."}
	}
	return p
}

// compileToCompare compiles the contracts that diff compares; with
// errors, it prints them and fails: broken contracts have nothing to
// compare.
func compileToCompare(e env, patterns []string) (*compiler.Result, error) {
	res, err := compiler.Compile(compiler.Config{}, patterns...)
	if err != nil {
		return nil, err
	}
	if res.HasErrors() {
		diag.Print(e.stderr, diag.Text, res.Diagnostics, res.Source)
		errs, _ := diag.Count(res.Diagnostics)
		return nil, failf("the contracts have %s; fix them, then compare", plural(errs, "error"))
	}
	return res, nil
}
