package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/plugins"
	pluginrpc "github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"

	"github.com/toolc/toolc/internal/testsync"
)

// The integration tests run the real thing: the contracts in testdata
// compiled by the compiler, the faulty handler plugin built by host.Build
// and started by host.Start, and calls through go-plugin. The plugin is
// built once, on first use, so that tests that need no plugin (the
// validator's) do not wait for the go command.

func TestMain(m *testing.M) {
	if os.Getenv(hostHelperEnv) != "" {
		runHostHelper()
		return
	}
	code := m.Run()
	pluginrpc.CleanupClients()
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	os.Exit(code)
}

var fixture struct {
	once sync.Once
	err  error
	dir  string
	// cat holds both test services: faulty (the plugin) and inproc.
	cat *catalog.Catalog
	// healthy is a service that runs the faulty binary too, but serves
	// only its ping tool, for the isolation tests.
	healthy *catalog.Service
	bin     *host.Binary
	// record is the file the record tool appends to (FAULTY_RECORD).
	record string
}

// setup compiles the test contracts and builds the faulty plugin, once.
func setup(t testing.TB) {
	t.Helper()
	fixture.once.Do(func() { fixture.err = build() })
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
}

func build() error {
	dir, err := os.MkdirTemp("", "toolc-runtime-test")
	if err != nil {
		return err
	}
	fixture.dir = dir
	res, err := compiler.Compile(compiler.Config{}, "./testdata/faulty", "./testdata/inproc")
	if err != nil {
		return err
	}
	if res.HasErrors() {
		return fmt.Errorf("the test contracts do not compile: %v", res.Diagnostics)
	}
	fixture.cat = res.Catalog
	hres, err := compiler.Compile(compiler.Config{}, "./testdata/healthy")
	if err != nil {
		return err
	}
	if hres.HasErrors() {
		return fmt.Errorf("the healthy contract does not compile: %v", hres.Diagnostics)
	}
	fixture.healthy = hres.Catalog.Services[0]
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
	if fixture.bin, err = host.Build(ctx, filepath.Join(dir, "bin"), ".", svc); err != nil {
		return err
	}
	// The plugins get the variables of the process that starts them that
	// $TOOLC_PLUGIN_ENV names: FAULTY_RECORD, and FAULTY_CPUPROFILE when
	// a benchmark is profiled.
	fixture.record = filepath.Join(dir, "record.jsonl")
	if err := os.Setenv(host.PluginEnvVar, "FAULTY_*"); err != nil {
		return err
	}
	return os.Setenv("FAULTY_RECORD", fixture.record)
}

// startFaulty starts a faulty plugin of the test's own, stopped when the
// test ends. Its stderr is shown if the test fails.
func startFaulty(t testing.TB) *host.Plugin {
	t.Helper()
	p, _ := startPlugin(t, "faulty", host.Options{})
	return p
}

// startPlugin starts the faulty handler binary as the plugin of service,
// with opts, and returns it with its stderr.
func startPlugin(t testing.TB, service string, opts host.Options) (*host.Plugin, *testsync.Buffer) {
	t.Helper()
	setup(t)
	stderr := &testsync.Buffer{}
	opts.Stderr = stderr
	bin := *fixture.bin
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

// inprocHandlers are the in-process handlers of the inproc service.
func inprocHandlers() []plugins.Handler {
	return []plugins.Handler{
		plugins.Handle("add", func(_ context.Context, req struct{ A, B int }) (*plugins.Result, error) {
			return plugins.JSON(map[string]int{"sum": req.A + req.B})
		}),
		routeHandler(),
	}
}

// routeHandler is the inproc service's route, whose arguments travel in
// Mcp-Param-* headers too.
func routeHandler() plugins.Handler {
	return plugins.Handle("route", func(_ context.Context, req struct{ Region string }) (*plugins.Result, error) {
		return plugins.Text("to " + req.Region), nil
	})
}

// newRuntime returns a runtime serving both test services: faulty through
// p, and inproc in-process.
func newRuntime(t testing.TB, opts runtime.Options, p runtime.Dispatcher) *runtime.Runtime {
	t.Helper()
	setup(t)
	rt := runtime.New(opts)
	if _, err := rt.Swap(fixture.cat, map[string]runtime.Dispatcher{
		"faulty": p,
		"inproc": runtime.Local(inprocHandlers()...),
	}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// call runs a tool and fails the test on an error return.
func call(t testing.TB, rt *runtime.Runtime, name, args string) *runtime.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rt.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// text joins a result's text blocks.
func text(res *runtime.Result) string {
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// structured decodes a result's structured content.
func structured(t testing.TB, res *runtime.Result) map[string]any {
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

// wantOK fails unless res is a successful result.
func wantOK(t testing.TB, res *runtime.Result) {
	t.Helper()
	if res.IsError {
		t.Fatalf("got a tool error: %s", text(res))
	}
}

// wantToolError fails unless res is a tool error whose text holds each of
// want.
func wantToolError(t testing.TB, res *runtime.Result, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("got a result, want a tool error: %s", text(res))
	}
	got := text(res)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("tool error %q does not say %q", got, w)
		}
	}
}

// echoWorks checks that the echo tool answers.
func echoWorks(t testing.TB, rt *runtime.Runtime) {
	t.Helper()
	res := call(t, rt, "echo", `{"text":"still here"}`)
	wantOK(t, res)
	if got := structured(t, res)["echo"]; got != "still here" {
		t.Fatalf("echo answered %v", got)
	}
}

// recorded returns what the record tool has written so far.
func recorded(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(fixture.record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

var markers atomic.Int64

// marker returns a string unique to the test process, for finding a call
// in the record file.
func marker() string {
	return fmt.Sprintf("marker-%d-%06d", os.Getpid(), markers.Add(1))
}
