//go:build !serveonly

package main

import (
	"github.com/toolc/toolc/compiler"
)

func runRules(e env, args []string) error {
	fs := newFlags(e, "rules")
	format := fs.String("format", "text", "output format: text, json or markdown")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	if err := compiler.WriteRules(e.stdout, *format); err != nil {
		return usageErr(err)
	}
	return nil
}
