//go:build !serveonly

package main

import (
	"fmt"
	"path/filepath"

	"github.com/toolc/toolc/scaffold"
)

func runInit(e env, args []string) error {
	fs := newFlags(e, "init")
	sdkDir := fs.String("sdk", "", "point the handler at the toolc checkout in `DIR` with a replace directive (default: the checkout this toolc was built from, when it is not a released version)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageLineErr(fs)
	}
	dir := rest[0]
	sdk, err := scaffold.FindSDK(*sdkDir)
	if err != nil {
		return err
	}
	res, err := scaffold.Init(dir, sdk)
	if res != nil {
		for _, f := range res.Files {
			fmt.Fprintf(e.stdout, "created %s\n", filepath.Join(dir, f))
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nNext:\n%s", res.NextText())
	return nil
}
