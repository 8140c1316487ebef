package main

import (
	"testing"

	"github.com/toolc/toolc/examples/internal/examplestest"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The harness is shared by the examples: see examplestest.

var contract = examplestest.Contract

func serve(t *testing.T, hs ...plugins.Handler) *runtime.Runtime {
	t.Helper()
	return examplestest.Serve(t, hs...)
}

func call(t *testing.T, rt *runtime.Runtime, tool, args string) (*plugins.Result, []plugins.Event) {
	t.Helper()
	return examplestest.Call(t, rt, tool, args)
}
