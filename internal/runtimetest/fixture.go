// Package runtimetest is the test fixture that the tests of runtime,
// mcpserver and httpapi share: the test contracts in runtime/testdata
// compiled, the faulty handler plugin built once per test process, and
// helpers that serve a runtime over HTTP and MCP, call it, and mint OAuth
// tokens. It is imported by tests only.
package runtimetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pluginrpc "github.com/toolc/toolc/plugins/rpc"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// CloneCatalog deep-copies a catalog through its file format.
func CloneCatalog(t testing.TB, cat *catalog.Catalog) *catalog.Catalog {
	t.Helper()
	data, err := cat.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Service returns the service of the catalog with the name, or nil.
func Service(cat *catalog.Catalog, name string) *catalog.Service {
	for _, s := range cat.Services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// EnvelopeCatalog is runtime/testdata/envelope compiled: ping and other,
// in-process tools for the /v1/call envelope and stdio tests.
var EnvelopeCatalog = sync.OnceValues(func() (*catalog.Catalog, error) {
	res, err := compiler.Compile(compiler.Config{Dir: Root()}, "./runtime/testdata/envelope")
	if err != nil {
		return nil, err
	}
	if res.HasErrors() {
		return nil, errors.New("runtime/testdata/envelope does not compile")
	}
	return res.Catalog, nil
})

// Root is the module's root directory, which the test contracts' paths
// (runtime/testdata/...) are relative to.
func Root() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Fixture is what Setup builds, once per test process.
type Fixture struct {
	// Dir is a directory of the fixture's own, removed by Main.
	Dir string
	// Catalog holds both test services: faulty (the plugin) and inproc.
	Catalog *catalog.Catalog
	// Healthy is a service that runs the faulty binary too, but serves
	// only its ping tool, for the isolation tests.
	Healthy *catalog.Service
	// Binary is the faulty service's handler plugin.
	Binary *host.Binary
	// Record is the file the record tool appends to (FAULTY_RECORD).
	Record string
}

var fixture struct {
	Fixture
	once sync.Once
	err  error
}

// Setup compiles the test contracts and builds the faulty plugin, once,
// and returns them.
func Setup(t testing.TB) *Fixture {
	t.Helper()
	fixture.once.Do(func() { fixture.err = build() })
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return &fixture.Fixture
}

// Main runs the tests of m, then stops the plugins they left running and
// removes the fixture's directory. A test package that uses the fixture
// has TestMain call os.Exit(runtimetest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	pluginrpc.CleanupClients()
	if fixture.Dir != "" {
		os.RemoveAll(fixture.Dir)
	}
	return code
}

func build() error {
	dir, err := os.MkdirTemp("", "toolc-runtime-test")
	if err != nil {
		return err
	}
	fixture.Dir = dir
	root := Root()
	res, err := compiler.Compile(compiler.Config{Dir: root}, "./runtime/testdata/faulty", "./runtime/testdata/inproc")
	if err != nil {
		return err
	}
	if res.HasErrors() {
		return fmt.Errorf("the test contracts do not compile: %v", res.Diagnostics)
	}
	fixture.Catalog = res.Catalog
	hres, err := compiler.Compile(compiler.Config{Dir: root}, "./runtime/testdata/healthy")
	if err != nil {
		return err
	}
	if hres.HasErrors() {
		return fmt.Errorf("the healthy contract does not compile: %v", hres.Diagnostics)
	}
	fixture.Healthy = hres.Catalog.Services[0]
	var svc *catalog.Service
	for _, s := range res.Catalog.Services {
		if s.Name == "faulty" {
			svc = s
		}
	}
	if svc == nil {
		return fmt.Errorf("no faulty service in %v", res.Catalog.ToolNames())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if fixture.Binary, err = host.Build(ctx, filepath.Join(dir, "bin"), root, svc); err != nil {
		return err
	}
	// The plugins get the variables of the process that starts them that
	// $TOOLC_PLUGIN_ENV names: FAULTY_RECORD, and FAULTY_CPUPROFILE when
	// a benchmark is profiled.
	fixture.Record = filepath.Join(dir, "record.jsonl")
	if err := os.Setenv(host.PluginEnvVar, "FAULTY_*"); err != nil {
		return err
	}
	return os.Setenv("FAULTY_RECORD", fixture.Record)
}

// StartFaulty starts a faulty plugin of the test's own, stopped when the
// test ends. Its stderr is shown if the test fails.
func StartFaulty(t testing.TB) *host.Plugin {
	t.Helper()
	p, _ := StartPlugin(t, "faulty", host.Options{})
	return p
}

// StartPlugin starts the faulty handler binary as the plugin of service,
// with opts, and returns it with its stderr.
func StartPlugin(t testing.TB, service string, opts host.Options) (*host.Plugin, *testsync.Buffer) {
	t.Helper()
	Setup(t)
	stderr := &testsync.Buffer{}
	opts.Stderr = stderr
	bin := *fixture.Binary
	bin.Service = service
	ps, err := host.Start(context.Background(), []*host.Binary{&bin}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		host.Stop(ps, 0)
		if t.Failed() {
			t.Logf("%s plugin stderr:\n%.20000s", service, stderr.String())
		}
	})
	return ps[service], stderr
}

// InprocHandlers are the in-process handlers of the inproc service.
func InprocHandlers() []plugins.Handler {
	return []plugins.Handler{
		plugins.Handle("add", func(_ context.Context, req struct{ A, B int }) (*plugins.Result, error) {
			return plugins.JSON(map[string]int{"sum": req.A + req.B})
		}),
		RouteHandler(),
	}
}

// RouteHandler is the inproc service's route, whose arguments travel in
// Mcp-Param-* headers too.
func RouteHandler() plugins.Handler {
	return plugins.Handle("route", func(_ context.Context, req struct{ Region string }) (*plugins.Result, error) {
		return plugins.Text("to " + req.Region), nil
	})
}

// NewRuntime returns a runtime serving both test services: faulty through
// p, and inproc in-process.
func NewRuntime(t testing.TB, opts runtime.Options, p runtime.Dispatcher) *runtime.Runtime {
	t.Helper()
	Setup(t)
	rt := runtime.New(opts)
	if _, err := rt.Swap(fixture.Catalog, map[string]runtime.Dispatcher{
		"faulty": p,
		"inproc": runtime.Local(InprocHandlers()...),
	}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// Call runs a tool and fails the test on an error return.
func Call(t testing.TB, rt *runtime.Runtime, name, args string) *runtime.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rt.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// Text joins a result's text blocks.
func Text(res *runtime.Result) string {
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// WantOK fails unless res is a successful result.
func WantOK(t testing.TB, res *runtime.Result) {
	t.Helper()
	if res.IsError {
		t.Fatalf("got a tool error: %s", Text(res))
	}
}

// Structured decodes a result's structured content.
func Structured(t testing.TB, res *runtime.Result) map[string]any {
	t.Helper()
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		raw = data
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}

// WantToolError fails unless res is a tool error whose text holds each of
// want.
func WantToolError(t testing.TB, res *runtime.Result, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("got a result, want a tool error: %s", Text(res))
	}
	got := Text(res)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("tool error %q does not say %q", got, w)
		}
	}
}

// EchoWorks checks that the echo tool answers.
func EchoWorks(t testing.TB, rt *runtime.Runtime) {
	t.Helper()
	res := Call(t, rt, "echo", `{"text":"still here"}`)
	WantOK(t, res)
	if got := Structured(t, res)["echo"]; got != "still here" {
		t.Fatalf("echo answered %v", got)
	}
}

// IsolatedRuntime serves faulty through p, inproc in-process, and healthy
// through a plugin of its own.
func IsolatedRuntime(t testing.TB, opts runtime.Options, p *host.Plugin) *runtime.Runtime {
	t.Helper()
	healthy, _ := StartPlugin(t, "healthy", host.Options{})
	cat := &catalog.Catalog{Services: append(slices.Clone(Setup(t).Catalog.Services), Setup(t).Healthy)}
	rt := runtime.New(opts)
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{
		"faulty":  p,
		"inproc":  runtime.Local(InprocHandlers()...),
		"healthy": healthy,
	}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// Pings calls the healthy service's ping n times, one after another, and
// returns how long each took.
func Pings(t testing.TB, rt *runtime.Runtime, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		res, err := rt.Call(ctx, "ping", json.RawMessage(`{}`))
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("ping after %s: %v", took, err)
		}
		if res.IsError || Text(res) != "pong" {
			t.Fatalf("ping answered %q", Text(res))
		}
		out = append(out, took)
	}
	return out
}
