// Package examplestest runs an example's handlers the way toolc serve runs
// its plugin, but in-process, for the examples' tests: the runtime
// validates each call's arguments and applies defaults before a handler
// runs, and holds each result to the contract's response fields.
package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// Contract compiles the contract in the test's working directory (the
// example's own), once per test binary.
var Contract = sync.OnceValues(func() (*catalog.Catalog, error) {
	res, err := compiler.Compile(compiler.Config{}, ".")
	if err != nil {
		return nil, err
	}
	if res.HasErrors() {
		var b strings.Builder
		diag.Print(&b, diag.Text, res.Diagnostics, res.Source)
		return nil, fmt.Errorf("the contract has errors:\n%s", b.String())
	}
	return res.Catalog, nil
})

// Serve serves the contract with hs in-process. It fails unless hs are
// exactly the contract's tools, and its prompts and resources that a
// handler serves.
func Serve(t testing.TB, hs ...plugins.Handler) *runtime.Runtime {
	t.Helper()
	cat, err := Contract()
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Services) != 1 {
		t.Fatalf("the contract has %d services, want 1", len(cat.Services))
	}
	var tools, handled []string
	for _, tool := range cat.Services[0].Tools {
		tools = append(tools, tool.Name)
	}
	// And the prompts and resources whose content the handler writes.
	for _, p := range cat.Services[0].Prompts {
		if p.Messages == nil {
			tools = append(tools, plugins.PromptPrefix+p.Name)
		}
	}
	for _, r := range cat.Services[0].Resources {
		if !r.Static() {
			tools = append(tools, plugins.ResourcePrefix+r.Name)
		}
	}
	for _, h := range hs {
		handled = append(handled, h.Tool())
	}
	slices.Sort(tools)
	slices.Sort(handled)
	if !slices.Equal(tools, handled) {
		t.Fatalf("handlers for %v, but the contract has the tools %v", handled, tools)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{cat.Services[0].Name: runtime.Local(hs...)}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// Call runs tool with args through rt, and returns its result and the
// events its handler reported.
func Call(t testing.TB, rt *runtime.Runtime, tool, args string) (*plugins.Result, []plugins.Event) {
	t.Helper()
	var (
		mu     sync.Mutex
		events []plugins.Event
	)
	res, err := rt.CallWithEvents(context.Background(), tool, json.RawMessage(args), func(ev plugins.Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res, events
}
