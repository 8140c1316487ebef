package main

import (
	"fmt"
	"path/filepath"

	"github.com/toolc/toolc/scaffold"
)

func runInit(e env, args []string) int {
	fs := newFlags(e, "init")
	sdkDir := fs.String("sdk", "", "point the handler at the toolc checkout in `DIR` with a replace directive (default: the checkout this toolc was built from, when it is not a released version)")
	rest, status, ok := parseFlags(fs, args)
	if !ok {
		return status
	}
	if len(rest) != 1 {
		fmt.Fprintln(e.stderr, "usage: toolc "+usageLine(fs))
		return exitUsage
	}
	dir := rest[0]
	sdk, err := scaffold.FindSDK(*sdkDir)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc init: %v\n", err)
		return exitUsage
	}
	res, err := scaffold.Init(dir, sdk)
	if res != nil {
		for _, f := range res.Files {
			fmt.Fprintf(e.stdout, "created %s\n", filepath.Join(dir, f))
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc init: %v\n", err)
		return exitUsage
	}
	width := 0
	for _, s := range res.Next {
		width = max(width, len(s.Command))
	}
	fmt.Fprintf(e.stdout, "\nNext:\n")
	for _, s := range res.Next {
		if s.Comment == "" {
			fmt.Fprintf(e.stdout, "\t%s\n", s.Command)
		} else {
			fmt.Fprintf(e.stdout, "\t%-*s  # %s\n", width, s.Command, s.Comment)
		}
	}
	return exitOK
}
