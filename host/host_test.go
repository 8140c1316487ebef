package host_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/internal/testsync"
)

// The host tests build the runtime's faulty test plugin
// (runtime/testdata/faulty) and start it as toolc serve does.

// helperEnv makes the test binary a host helper: it starts the plugin
// named by the variable, reports its pid, and waits to be killed.
const helperEnv = "TOOLC_HOST_TEST_HELPER"

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(helperEnv) != "":
		runHelper()
		return
	case os.Getenv(hostHelperEnv) != "":
		runHostHelper()
		return
	}
	// The supervisor's tests use internal/runtimetest's fixture, which
	// Main cleans up, with the plugin clients.
	code := runtimetest.Main(m)
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	os.Exit(code)
}

var fixture struct {
	once sync.Once
	err  error
	dir  string
	svc  *catalog.Service
	bin  *host.Binary
}

// faulty returns the faulty service and its plugin, built once.
func faulty(t testing.TB) (*catalog.Service, *host.Binary) {
	t.Helper()
	fixture.once.Do(func() {
		fixture.dir, fixture.err = os.MkdirTemp("", "toolc-host-test")
		if fixture.err != nil {
			return
		}
		var res *compiler.Result
		res, fixture.err = compiler.Compile(compiler.Config{Dir: ".."}, "./runtime/testdata/faulty")
		if fixture.err != nil {
			return
		}
		if res.HasErrors() || len(res.Catalog.Services) != 1 {
			fixture.err = fmt.Errorf("the faulty contract does not compile: %v", res.Diagnostics)
			return
		}
		fixture.svc = res.Catalog.Services[0]
		fixture.bin, fixture.err = host.Build(context.Background(), filepath.Join(fixture.dir, "cache"), "..", fixture.svc)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.svc, fixture.bin
}

func TestBuild(t *testing.T) {
	svc, bin := faulty(t)
	if bin.Service != "faulty" {
		t.Errorf("Service = %q", bin.Service)
	}
	wantPkg, _ := filepath.Abs("../runtime/testdata/faulty")
	if bin.Package != wantPkg {
		t.Errorf("Package = %q, want %q", bin.Package, wantPkg)
	}
	if dir := filepath.Dir(bin.Path); dir != filepath.Join(fixture.dir, "cache") {
		t.Errorf("Path %q is not in the cache directory", bin.Path)
	}
	data, err := os.ReadFile(bin.Path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); !bytes.Equal(sum[:], bin.SHA256) {
		t.Errorf("SHA256 %x is not the binary's, %x", bin.SHA256, sum)
	}
	if bin.Took <= 0 {
		t.Errorf("Took = %s", bin.Took)
	}

	// A service whose Dir is absolute (its contract lies outside the
	// directory it was compiled in) is built from there, whatever the
	// base: toolc serve's base is ".", and it used to build "srv/x" for
	// "/srv/x", relative to the working directory.
	wantDir, _ := filepath.Abs(filepath.Join("..", filepath.FromSlash(svc.Dir)))
	abs := *svc
	abs.Dir = filepath.ToSlash(wantDir)
	absBin, err := host.Build(context.Background(), filepath.Join(fixture.dir, "cache"), ".", &abs)
	if err != nil {
		t.Fatalf("building from the absolute Dir %s: %v", abs.Dir, err)
	}
	if absBin.Package != wantPkg || absBin.Dir != wantDir {
		t.Errorf("absolute Dir: Package %q and Dir %q, want %q and %q", absBin.Package, absBin.Dir, wantPkg, wantDir)
	}

	// A rebuild replaces the binary under the same name, and leaves no
	// temporary files behind.
	again, err := host.Build(context.Background(), filepath.Join(fixture.dir, "cache"), "..", svc)
	if err != nil {
		t.Fatal(err)
	}
	if again.Path != bin.Path {
		t.Errorf("a rebuild went to %q, not %q", again.Path, bin.Path)
	}
	entries, err := os.ReadDir(filepath.Dir(bin.Path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a temporary file is left in the cache: %s", e.Name())
		}
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"go.mod":  "module broken\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() { undefinedThing() }\n",
	} {
		if err := os.WriteFile(filepath.Join(broken, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(dir, "cache")

	_, err := host.Build(context.Background(), cache, dir, &catalog.Service{Name: "broken", Dir: "broken"})
	var be *host.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Build of a broken handler = %v, want a *BuildError", err)
	}
	if be.Service != "broken" || !strings.Contains(be.Output, "undefinedThing") {
		t.Errorf("BuildError = %+v", be)
	}
	if msg := err.Error(); !strings.Contains(msg, `building the handler of service "broken"`) || !strings.Contains(msg, "undefined: undefinedThing") {
		t.Errorf("error %q", msg)
	}

	_, err = host.Build(context.Background(), cache, dir, &catalog.Service{Name: "absent", Dir: "absent", Handler: "cmd/h"})
	if !errors.As(err, &be) || !strings.Contains(err.Error(), filepath.Join(dir, "absent", "cmd", "h")+" does not exist") {
		t.Errorf("Build of a missing package = %v", err)
	}

	// A build that fails is not taken for one cut short; a build that
	// ctx's end killed (here, never started) wraps ctx.Err(), with the
	// message unchanged, so that serve.Run does not report it.
	if errors.Is(err, context.Canceled) {
		t.Errorf("Build of a broken handler = %v, which wraps context.Canceled", err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = host.Build(ended, cache, dir, &catalog.Service{Name: "broken", Dir: "broken"})
	if !errors.Is(err, context.Canceled) || !errors.As(err, &be) || !strings.HasPrefix(err.Error(), `building the handler of service "broken": `) {
		t.Errorf("Build cut short = %v, want a *BuildError that wraps context.Canceled", err)
	}

	// BuildAll reports every failure, not only the first.
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "broken", Dir: "broken"}, {Name: "absent", Dir: "absent"}}}
	_, err = host.BuildAll(context.Background(), cache, dir, cat)
	if err == nil || !strings.Contains(err.Error(), `service "broken"`) || !strings.Contains(err.Error(), `service "absent"`) {
		t.Errorf("BuildAll = %v, want both failures", err)
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv("TOOLC_CACHE", "/some/where")
	if d, err := host.CacheDir(); err != nil || d != "/some/where" {
		t.Errorf("CacheDir with TOOLC_CACHE = %q, %v", d, err)
	}
	t.Setenv("TOOLC_CACHE", "")
	d, err := host.CacheDir()
	if err != nil || !strings.HasSuffix(d, filepath.Join("toolc", "handlers")) {
		t.Errorf("CacheDir = %q, %v", d, err)
	}
}

// TestPluginEnvVar: $TOOLC_PLUGIN_ENV names the variables of toolc's
// environment that its plugins get beyond the defaults (plugins/rpc's
// TestPluginEnvironment starts a plugin with them).
func TestPluginEnvVar(t *testing.T) {
	for env, want := range map[string][]string{
		"":                            nil,
		"WEATHER_API_KEY":             {"WEATHER_API_KEY"},
		"A_KEY,B_*  C\tD, ,":          {"A_KEY", "B_*", "C", "D"},
		" TOOLC_FILESEARCH_ROOT PG* ": {"TOOLC_FILESEARCH_ROOT", "PG*"},
	} {
		t.Setenv(host.PluginEnvVar, env)
		cfg := host.ClientConfig(&host.Binary{Service: "s", Path: "/bin/s", Dir: "/srv/s"}, host.Options{})
		if !slices.Equal(cfg.PassEnv, want) {
			t.Errorf("%s=%q: PassEnv = %q, want %q", host.PluginEnvVar, env, cfg.PassEnv, want)
		}
		if !slices.Contains(cfg.Env, host.ServiceDirEnv+"=/srv/s") {
			t.Errorf("Env = %q, without %s", cfg.Env, host.ServiceDirEnv)
		}
	}
}

func TestStartAndCall(t *testing.T) {
	_, bin := faulty(t)
	var stderr testsync.Buffer
	ps, err := host.Start(context.Background(), []*host.Binary{bin}, host.Options{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Stop(ps, time.Second)
	p := ps["faulty"]
	if p == nil || len(ps) != 1 {
		t.Fatalf("Start = %v", ps)
	}
	if got := strings.Join(p.Tools(), ","); got != "bad_result,bad_utf8,bad_utf8_error,big_result,crash,echo,flood_stderr,grandchild,hang,leak,panic,ping,progress,record,say,sleep,stdout,trace_context" {
		t.Errorf("Tools = %s", got)
	}
	res, err := p.Call(context.Background(), "echo", "call-1", json.RawMessage(`{"text":"hi","times":2}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("echo = %v, %v", res, err)
	}

	// The plugin's stderr reaches Options.Stderr, a line at a time, each
	// prefixed with the service's name.
	res, err = p.Call(context.Background(), "panic", "call-2", json.RawMessage(`{}`), nil)
	if err != nil || !res.IsError {
		t.Fatalf("panic = %v, %v", res, err)
	}
	testsync.WaitFor(t, 5*time.Second, "the panic on stderr", func() bool {
		return strings.Contains(stderr.String(), "[faulty] toolc: tool panic panicked: deliberate panic in faulty\n")
	})
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		if !strings.HasPrefix(line, "[faulty] ") {
			t.Errorf("stderr line without the prefix: %q", line)
		}
	}

	// Dispatchers hands the plugins to a runtime.
	ds := host.Dispatchers(ps)
	if ds["faulty"] != runtime.Dispatcher(p) || len(ds) != 1 {
		t.Errorf("Dispatchers = %v", ds)
	}

	// Stop stops the process.
	pid := p.Pid()
	host.Stop(ps, time.Second)
	testsync.WaitFor(t, 5*time.Second, "the stopped plugin to exit", func() bool { return !alive(pid) })
	if _, err := p.Call(context.Background(), "echo", "call-3", json.RawMessage(`{"text":"hi","times":1}`), nil); err == nil || !strings.Contains(err.Error(), "has been stopped") {
		t.Errorf("a call after Stop = %v", err)
	}
}

// TestHandlersLoad: Load starts a source's handlers and swaps its
// catalog into the runtime with them, as toolc serve and toolc call do.
func TestHandlersLoad(t *testing.T) {
	svc, bin := faulty(t)
	cat := &catalog.Catalog{Services: []*catalog.Service{svc}}
	cat.Seal()
	rt := runtime.New(runtime.Options{})
	var h host.Handlers
	defer h.Stop("the test ended")
	if err := h.Load(context.Background(), rt, &host.Source{Catalog: cat, Binaries: []*host.Binary{bin}}, "", host.Options{Stderr: io.Discard}, upstream.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Call(context.Background(), "echo", json.RawMessage(`{"text":"hi","times":2}`))
	if err != nil || res.IsError {
		t.Fatalf("echo through the runtime = %+v, %v", res, err)
	}
}

func TestStopWaitsForCallsInFlight(t *testing.T) {
	_, bin := faulty(t)
	ps, err := host.Start(context.Background(), []*host.Binary{bin}, host.Options{Stderr: &testsync.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	p := ps["faulty"]
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		res, err := p.Call(context.Background(), "sleep", "c", json.RawMessage(`{"ms":300}`), func(plugins.Event) { close(started) })
		if err == nil && (res.IsError || res.Content[0].Text != "slept 300ms") {
			err = fmt.Errorf("sleep = %+v", res)
		}
		done <- err
	}()
	<-started
	host.Stop(ps, 10*time.Second)
	if err := <-done; err != nil {
		t.Errorf("the call in flight during Stop: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	_, good := faulty(t)
	dir := t.TempDir()
	script := func(name, body string) *host.Binary {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return &host.Binary{Service: name, Path: path}
	}
	wrongSum := *good
	wrongSum.Service = "pinned"
	wrongSum.SHA256 = make([]byte, sha256.Size)

	cases := []struct {
		bin  *host.Binary
		want []string
	}{
		{&host.Binary{Service: "ghost", Path: filepath.Join(dir, "no-such-binary")}, []string{`starting the handler of service "ghost"`, "no-such-binary", "plugin binary not found"}},
		{script("silent", "exit 0"), []string{`starting the handler of service "silent"`, "not a toolc plugin", "exited without the go-plugin handshake"}},
		{script("chatty", "echo hello there; exec sleep 5"), []string{`starting the handler of service "chatty"`, "not a toolc plugin", `printed "hello there"`}},
		{&wrongSum, []string{`starting the handler of service "pinned"`, "checksum mismatch", hex.EncodeToString(good.SHA256)}},
	}
	for _, c := range cases {
		t.Run(c.bin.Service, func(t *testing.T) {
			start := time.Now()
			ps, err := host.Start(context.Background(), []*host.Binary{c.bin}, host.Options{StartTimeout: 5 * time.Second, Stderr: &testsync.Buffer{}})
			if err == nil {
				host.Stop(ps, 0)
				t.Fatal("Start succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error runs to several lines: %q", err)
			}
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("Start took %s to fail", took)
			}
		})
	}
}

// TestStartStopsTheOthersOnError: when one plugin fails to start, Start
// stops those it started.
func TestStartStopsTheOthersOnError(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("finds processes through /proc")
	}
	_, good := faulty(t)
	before := processesOf(good.Path)
	bad := &host.Binary{Service: "ghost", Path: filepath.Join(t.TempDir(), "missing")}
	ps, err := host.Start(context.Background(), []*host.Binary{good, bad}, host.Options{Stderr: &testsync.Buffer{}})
	if err == nil {
		host.Stop(ps, 0)
		t.Fatal("Start succeeded with a missing binary")
	}
	if !strings.Contains(err.Error(), `service "ghost"`) || strings.Contains(err.Error(), `service "faulty"`) {
		t.Errorf("error %q", err)
	}
	testsync.WaitFor(t, 5*time.Second, "the started plugin to be stopped", func() bool { return len(processesOf(good.Path)) <= len(before) })
}

// processesOf lists the running processes of an executable.
func processesOf(path string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == path && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestPluginsDieWithTheHost SIGKILLs a host, which has no chance to stop
// its plugins, and checks that the kernel takes them down: the one it
// started, and the one it restarted after a crash.
func TestPluginsDieWithTheHost(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	_, bin := faulty(t)
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+bin.Path, helperEnv+"_SUM="+hex.EncodeToString(bin.SHA256))
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill() // if the test fails early
	lines := bufio.NewScanner(out)
	readPid := func(what string) int {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the helper ended before it reported %s", what)
		}
		var pid int
		if _, err := fmt.Sscanf(lines.Text(), what+" %d", &pid); err != nil {
			t.Fatalf("the helper said %q, want %s PID", lines.Text(), what)
		}
		return pid
	}
	first := readPid("started")
	restarted := readPid("restarted")
	defer syscall.Kill(first, syscall.SIGKILL) // only if the test fails
	defer syscall.Kill(restarted, syscall.SIGKILL)
	if first == restarted || !alive(restarted) {
		t.Fatalf("the restarted plugin %d (first %d) is not running while its host is", restarted, first)
	}

	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	testsync.WaitFor(t, 5*time.Second, fmt.Sprintf("plugin %d to die with its host", restarted), func() bool { return !alive(restarted) })
	if alive(first) {
		t.Errorf("the crashed plugin %d is still running", first)
	}
}

// runHelper is the host that TestPluginsDieWithTheHost kills: it starts
// the plugin, crashes it, has it restarted, reports both pids and waits.
func runHelper() {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(1)
	}
	sum, err := hex.DecodeString(os.Getenv(helperEnv + "_SUM"))
	if err != nil {
		fail(err)
	}
	bin := &host.Binary{Service: "faulty", Path: os.Getenv(helperEnv), SHA256: sum}
	ps, err := host.Start(context.Background(), []*host.Binary{bin}, host.Options{})
	if err != nil {
		fail(err)
	}
	p := ps["faulty"]
	fmt.Println("started", p.Pid())
	if _, err := p.Call(context.Background(), "crash", "c1", json.RawMessage(`{"code":3}`), nil); err == nil {
		fail(errors.New("crash did not crash"))
	}
	// The restart happens on this call, from this goroutine's thread.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Call(ctx, "echo", "c2", json.RawMessage(`{"text":"x","times":1}`), nil); err != nil {
		fail(err)
	}
	fmt.Println("restarted", p.Pid())
	time.Sleep(time.Minute)
}

// alive reports whether pid is a running process; a zombie, dead but not
// yet reaped by whoever adopted it, is not.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // not Linux
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
