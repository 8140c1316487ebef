package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bundle tests make a bundle of the toolc dev tests' project (its svc
// service: echo answers "v1:" and the message) and serve it where there is
// no Go: PATH without a go command, no HOME, no GOCACHE, and a working
// directory with no sources, as a production machine or a container has it.

// builtOnce is a file that the tests of a run build once, the first time
// one needs it, or why building it failed.
type builtOnce struct {
	once      sync.Once
	path, err string
}

// get returns the file that build makes, calling build the first time.
func (b *builtOnce) get(tb testing.TB, build func() (string, error)) string {
	tb.Helper()
	b.once.Do(func() {
		if path, err := build(); err != nil {
			b.err = err.Error()
		} else {
			b.path = path
		}
	})
	if b.err != "" {
		tb.Fatal(b.err)
	}
	return b.path
}

var sharedBundleFile builtOnce

// sharedBundle is a bundle of the dev test project, made once for the
// tests of this file, beside the toolc under test (TestMain removes it).
func sharedBundle(t testing.TB) string {
	t.Helper()
	return sharedBundleFile.get(t, func() (string, error) {
		dir := newDevProject(t)
		out := filepath.Join(filepath.Dir(toolcBin), "svc-bundle")
		cmd := exec.Command(toolcBin, "bundle", "-o", out, "./...")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("toolc bundle: %v\n%s", err, b)
		}
		return out, nil
	})
}

// noGoEnv is the environment of a machine without Go: PATH=/usr/bin:/bin,
// which must hold no go command (else a directory that holds nothing),
// and nothing else: no HOME, no GOCACHE, no GOPATH.
func noGoEnv(t *testing.T) []string {
	t.Helper()
	path := "/usr/bin:/bin"
	for _, dir := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			t.Logf("%s has a go command: PATH is an empty directory instead", dir)
			path = t.TempDir()
		}
	}
	return []string{"PATH=" + path}
}

// noGoCmd is toolc with args, run with noGoEnv in an empty directory.
func noGoCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(toolcBin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = noGoEnv(t)
	return cmd
}

// TestBundleServesWithoutGo serves a bundle with no go command, no
// sources and no HOME: over HTTP to the go-sdk client, over stdio to
// mcp-go, and through --catalog naming the bundle's catalog; each lists
// the tools and calls one.
func TestBundleServesWithoutGo(t *testing.T) {
	t.Parallel()
	b := sharedBundle(t)

	t.Run("http", func(t *testing.T) {
		for _, args := range [][]string{{"--bundle", b}, {"--catalog", filepath.Join(b, "catalog.json")}} {
			cmd := noGoCmd(t, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
			url, stderr := startServeCmd(t, cmd)
			client := mcp.NewClient(&mcp.Implementation{Name: "bundle-test", Version: "1"}, nil)
			session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
			if err != nil {
				t.Fatalf("toolc serve %s: %v\n%s", strings.Join(args, " "), err, stderr)
			}
			res, err := session.ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != 2 {
				t.Fatalf("tools/list: %v %v\n%s", res, err, stderr)
			}
			call, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "svc_echo", Arguments: map[string]any{"message": "hi"}})
			if err != nil || resultText(call) != "v1:hi" {
				t.Errorf("tools/call svc_echo: %v %v\n%s", call, err, stderr)
			}
			session.Close()
			if strings.Contains(stderr.String(), "build") {
				t.Errorf("toolc serve %s mentions a build:\n%s", strings.Join(args, " "), stderr)
			}
		}
	})

	t.Run("stdio", func(t *testing.T) {
		stderr := &lockedBuffer{}
		dir, env := t.TempDir(), noGoEnv(t)
		client := mcpgo.NewClient(mcpgotransport.NewStdioWithOptions(toolcBin, nil, []string{"serve", "--stdio", "--bundle", b},
			mcpgotransport.WithCommandFunc(func(ctx context.Context, name string, _, args []string) (*exec.Cmd, error) {
				cmd := exec.Command(name, args...)
				cmd.Dir, cmd.Env, cmd.Stderr = dir, env, stderr
				return cmd, nil
			})))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		var init mcpgotypes.InitializeRequest
		init.Params.ClientInfo = mcpgotypes.Implementation{Name: "bundle-test", Version: "1"}
		if _, err := client.Initialize(ctx, init); err != nil {
			t.Fatalf("initialize: %v\n%s", err, stderr)
		}
		tools, err := client.ListTools(ctx, mcpgotypes.ListToolsRequest{})
		if err != nil || len(tools.Tools) != 2 {
			t.Fatalf("tools/list: %v %v\n%s", tools, err, stderr)
		}
		var req mcpgotypes.CallToolRequest
		req.Params.Name, req.Params.Arguments = "svc_echo", map[string]any{"message": "hi"}
		res, err := client.CallTool(ctx, req)
		if err != nil || len(res.Content) != 1 || res.Content[0].(mcpgotypes.TextContent).Text != "v1:hi" {
			t.Errorf("tools/call: %+v %v\n%s", res, err, stderr)
		}
	})

	t.Run("call", func(t *testing.T) {
		cmd := noGoCmd(t, "call", "--catalog", filepath.Join(b, "catalog.json"), "echo", `{"message":"hi"}`)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"text": "v1:hi"`) {
			t.Errorf("toolc call --catalog BUNDLE/catalog.json: %v\n%s", err, out)
		}
	})
}

// copyBundle copies the shared bundle, for a test to damage.
func copyBundle(t *testing.T) string {
	t.Helper()
	src := sharedBundle(t)
	dst := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// resum writes SHA256SUMS again after a test changed name, as someone
// who edits a bundle on purpose would.
func resum(t *testing.T, dir, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.SplitAfter(string(sums), "\n") {
		if strings.HasSuffix(l, "  "+name+"\n") {
			l = hex.EncodeToString(sum[:]) + "  " + name + "\n"
		}
		out = append(out, l)
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBundleRefused: toolc serve --bundle refuses, before it starts
// anything, a handler that does not match its sum and a bundle built for
// another platform, saying which and why.
func TestBundleRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"handler replaced", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "handlers", "svc"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("x"))
			f.Close()
		}, "handlers/svc has sha256 "},
		{"another platform", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "manifest.json")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.Replace(data, []byte(`"goarch": "`), []byte(`"goarch": "x`), 1)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			resum(t, dir, "manifest.json")
		}, "was built for linux/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyBundle(t)
			tc.damage(t, dir)
			cmd := noGoCmd(t, "serve", "--http", "127.0.0.1:0", "--bundle", dir)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "serving") {
				t.Errorf("toolc serve --bundle: %v\n%s\nwant exit 2 and %q", err, out, tc.want)
			}
		})
	}
}

// TestBundleCommand: toolc bundle writes the same bytes twice, refuses
// to replace a directory that holds no bundle, and writes nothing for a
// contract with errors.
func TestBundleCommand(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	out := filepath.Join("dist", "b") // relative, as a user types it
	read := func() map[string][]byte {
		out := filepath.Join(dir, out)
		files := map[string][]byte{}
		fs.WalkDir(os.DirFS(out), ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files[p], _ = os.ReadFile(filepath.Join(out, p))
			}
			return err
		})
		return files
	}
	var first map[string][]byte
	for i := range 2 {
		r := toolc(t, dir, "bundle", "-o", out, "./...")
		if r.status != 0 || !strings.Contains(r.stderr, "toolc bundle: wrote "+out+" for ") {
			t.Fatalf("toolc bundle: %d\n%s", r.status, r.stderr)
		}
		if i == 0 {
			first = read()
			continue
		}
		second := read()
		if len(first) != 4 || len(second) != len(first) {
			t.Errorf("files: %d, then %d", len(first), len(second))
		}
		for name, data := range first {
			if !bytes.Equal(data, second[name]) {
				t.Errorf("%s differs between two bundles of the same sources", name)
			}
		}
	}

	if r := toolc(t, dir, "bundle", "./..."); r.status != exitUsage || !strings.Contains(r.stderr, "-o DIR is required") {
		t.Errorf("toolc bundle without -o: %d %s", r.status, r.stderr)
	}
	if r := toolc(t, dir, "bundle", "-o", "handler", "./..."); r.status != exitUsage || !strings.Contains(r.stderr, "handler exists and holds no toolc bundle: not replacing it") {
		t.Errorf("toolc bundle -o handler: %d %s", r.status, r.stderr)
	}
	writeDevFile(t, filepath.Join(dir, "api", "svc.cue"), strings.Replace(readDevFile(t, filepath.Join(dir, "api", "svc.cue")), "echo: {", "Echo: {", 1))
	fresh := filepath.Join(t.TempDir(), "b")
	if r := toolc(t, dir, "bundle", "-o", fresh, "./..."); r.status != exitFail {
		t.Errorf("toolc bundle of a broken contract: %d %s", r.status, r.stderr)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("toolc bundle of a broken contract wrote its directory")
	}
}

// TestBundleRefusesUpstream: a bundle cannot carry a service that an
// upstream MCP server serves; toolc bundle says which, at its contract's
// position, exits 1 and writes nothing, before it builds any handler.
func TestBundleRefusesUpstream(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	writeDevFile(t, filepath.Join(dir, "docs", "docs.cue"), `package docs

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name: "docs", version: "1.0.0", description: "Docs from an existing MCP server"
	tools: search: {description: "Search the docs", request: fields: {}}
	upstream: command: ["docs-mcp", "--stdio"]
}
`)
	out := filepath.Join(t.TempDir(), "b")
	r := toolc(t, dir, "bundle", "-o", out, "./...")
	want := `docs/docs.cue:5:1: service "docs" is served by an upstream MCP server (its command docs-mcp), which a bundle cannot carry`
	if r.status != exitFail || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "nothing written") {
		t.Errorf("toolc bundle with an upstream: %d\n%s\nwant exit 1 and %q", r.status, r.stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("toolc bundle with an upstream made %s: %v", out, err)
	}
}

// TestServeWithoutGo: toolc serve and toolc dev from sources, on a
// machine without Go, tell the client why they have no tools: tools/list
// is an error naming the missing go command, every time it is asked, and
// the connection stays open.
func TestServeWithoutGo(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	for _, command := range []string{"serve", "dev"} {
		t.Run(command, func(t *testing.T) {
			stderr := &lockedBuffer{}
			cmd := exec.Command(toolcBin, command, "--stdio", "./...")
			cmd.Dir, cmd.Env, cmd.Stderr = dir, append(noGoEnv(t), "TOOLC_CACHE="+t.TempDir()), stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "no-go", Version: "1"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr)
			}
			defer session.Close()
			for range 2 {
				_, err := session.ListTools(ctx, nil)
				if err == nil || !strings.Contains(err.Error(), "the server could not load its tools: no go command on PATH") ||
					!strings.Contains(err.Error(), "toolc serve --bundle DIR") {
					t.Errorf("tools/list: %v, want an error naming the missing go command\n%s", err, stderr)
				}
			}
			if strings.Contains(stderr.String(), "last good") {
				t.Errorf("toolc %s speaks of a last good state it never had:\n%s", command, stderr)
			}
		})
	}
}

// TestListenBeforeBuild: a port in use is said at once, before the
// handler build, by toolc serve and toolc dev.
func TestListenBeforeBuild(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := newDevProject(t)
	for _, command := range []string{"serve", "dev"} {
		t.Run(command, func(t *testing.T) {
			goflags, linked := slowBuild(t)
			cmd := exec.Command(toolcBin, command, "--http", ln.Addr().String(), "./...")
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "TOOLC_CACHE="+t.TempDir(), goflags)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), "address already in use") {
				t.Errorf("toolc %s on a port in use: %v\n%s", command, err, out)
			}
			if _, err := os.Stat(linked); err == nil {
				t.Errorf("toolc %s built the handler (in %v) before it found the port in use\n%s", command, time.Since(start), out)
			}
		})
	}
}

// TestDevBrokenFirstLoad: when toolc dev's first load fails, it does not
// claim a last good state, and a client's tools/list is an error that
// says why; once the contract is fixed, the client is told the list
// changed and gets the tools.
func TestDevBrokenFirstLoad(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	contract := filepath.Join(dir, "api", "svc.cue")
	good := readDevFile(t, contract)
	writeDevFile(t, contract, mustReplace(t, good, "echo: {", "Echo: {"))
	stderr := &lockedBuffer{}
	cmd := exec.Command(toolcBin, "dev", "--stdio", "./...")
	cmd.Dir, cmd.Env, cmd.Stderr = dir, append(os.Environ(), "TOOLC_CACHE="+t.TempDir()), stderr
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "broken", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	_, err = session.ListTools(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "the contracts have 1 error: api/svc.cue:") || !strings.Contains(err.Error(), "[tool-name]") {
		t.Errorf("tools/list after a broken first load: %v, want the contract's error\n%s", err, stderr)
	}
	// The status line is written before the gate opens, but exec copies
	// standard error in its own goroutine: it may reach the buffer after
	// the answer reached the client.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "no tools are served until a reload succeeds") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := stderr.String(); strings.Contains(s, "last good") || !strings.Contains(s, "no tools are served until a reload succeeds") {
		t.Errorf("toolc dev's status after a broken first load:\n%s", s)
	}
	writeDevFile(t, contract, good)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("no list_changed after the fix\n%s", stderr)
	}
	res, err := session.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 2 {
		t.Errorf("tools/list after the fix: %v %v\n%s", res, err, stderr)
	}
}

// TestHealth: toolc health exits 0 and prints the answer of a server
// that serves, and 1 for one that does not answer or has no tools.
func TestHealth(t *testing.T) {
	t.Parallel()
	b := sharedBundle(t)
	_, url, _ := startServeHTTP(t, "--bundle", b)
	// The check's URL, the server's, and the server's host and port.
	for _, target := range []string{url + "/healthz", url, url + "/", strings.TrimPrefix(url, "http://")} {
		r := toolc(t, ".", "health", target)
		if r.status != 0 || !strings.Contains(r.stdout, `"status":"ok"`) {
			t.Errorf("toolc health %s of a serving server: %d %q %q", target, r.status, r.stdout, r.stderr)
		}
	}
	if r := toolc(t, ".", "health", url+"/mcp"); r.status != exitFail || !strings.Contains(r.stderr, "not as a toolc health check does") {
		t.Errorf("toolc health of another path: %d %q", r.status, r.stderr)
	}

	// A server whose handlers cannot be built: up, and failed.
	dir := newDevProject(t)
	cmd := exec.Command(toolcBin, "serve", "--http", "127.0.0.1:0", "./...")
	cmd.Dir, cmd.Env = dir, append(noGoEnv(t), "TOOLC_CACHE="+t.TempDir())
	failed, _ := startServeCmd(t, cmd)
	r := toolc(t, ".", "health", failed+"/healthz")
	if r.status != exitFail || !strings.Contains(r.stderr, "/healthz: failed (503 Service Unavailable)") {
		t.Errorf("toolc health of a server with no tools: %d %q", r.status, r.stderr)
	}
	if res, err := http.Post(failed+"/v1/call", "application/json", strings.NewReader(`{"name":"echo","arguments":{"message":"hi"}}`)); err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("POST /v1/call of a server with no tools: %v %v", res, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/healthz"
	ln.Close()
	if r := toolc(t, ".", "health", "--timeout", "2s", closed); r.status != exitFail || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("toolc health of nothing: %d %q", r.status, r.stderr)
	}
	if r := toolc(t, ".", "health", "a", "b"); r.status != exitUsage {
		t.Errorf("toolc health a b: %d %q", r.status, r.stderr)
	}
}

// firstCall runs toolc serve --stdio --bundle with the initialize, the
// initialized notification and a tools/call on its standard input at once,
// and returns the time from exec to the call's answer, and the CPU time
// that toolc and its plugin took in all (to the end of the session).
func firstCall(tb testing.TB, bin, bundleDir string) (wall, cpu time.Duration) {
	tb.Helper()
	cmd := exec.Command(bin, "serve", "--stdio", "--bundle", bundleDir)
	cmd.Dir = tb.TempDir()
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"svc_echo","arguments":{"message":"hi"}}}`,
	}, "\n") + "\n")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"jsonrpc":"2.0","id":2,"result"`) {
			wall = time.Since(start)
			if !strings.Contains(sc.Text(), "v1:hi") {
				tb.Fatalf("the first call answered %s", sc.Text())
			}
		}
	}
	if err := cmd.Wait(); err != nil || wall == 0 {
		tb.Fatalf("no answer to the first call (%v)\n%s", err, stderr.String())
	}
	// wait4's usage counts the children that toolc waited for: the plugin.
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	return wall, cpu
}

// TestBundleFirstCall: a served bundle answers its first call soon after
// exec (the goal, in BENCHMARKS.md, is 100 ms; this bound is for a loaded
// CI machine).
func TestBundleFirstCall(t *testing.T) {
	b := sharedBundle(t)
	var walls, cpus []time.Duration
	for range 5 {
		wall, cpu := firstCall(t, toolcBin, b)
		walls, cpus = append(walls, wall), append(cpus, cpu)
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	t.Logf("exec to first answered call: median %v (of %v); CPU of toolc and its plugin: median %v", walls[2], walls, cpus[2])
	if walls[2] > 2*time.Second {
		t.Errorf("exec to first answered call: median %v", walls[2])
	}
}

// BenchmarkBundleFirstCall measures exec to the first answered call of a
// served bundle, over stdio: toolc's start, the check of the bundle's
// sums, the plugin's start and handshake, and one call.
//
// Each iteration serves the bundle with toolc, and then with toolc built
// with -tags serveonly (serveonly-*), which links no CUE.
func BenchmarkBundleFirstCall(b *testing.B) {
	dir, lean := sharedBundle(b), serveOnlyBin(b)
	var walls, cpus, leanWalls, leanCPUs []time.Duration
	for b.Loop() {
		wall, cpu := firstCall(b, toolcBin, dir)
		walls, cpus = append(walls, wall), append(cpus, cpu)
		wall, cpu = firstCall(b, lean, dir)
		leanWalls, leanCPUs = append(leanWalls, wall), append(leanCPUs, cpu)
	}
	reportPercentiles(b, walls, "first-call")
	reportPercentiles(b, cpus, "cpu")
	reportPercentiles(b, leanWalls, "serveonly-first-call")
	reportPercentiles(b, leanCPUs, "serveonly-cpu")
}

// TestServeTaskStoreUnwritable: toolc serve's default task store is a file
// in the state directory; where it cannot be made (a container's read-only
// file system, as in docs/deploying.md), serve serves all the same, with
// its tasks in memory, and says so. It exited at start, and the
// container with it.
func TestServeTaskStoreUnwritable(t *testing.T) {
	t.Parallel()
	b := sharedBundle(t)
	cmd := toolcCmd(t, "serve", "--http", "127.0.0.1:0", "--bundle", b)
	// Under a file, so that no directory can be made there, even by root.
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME=/dev/null/state")
	url, stderr := startServeCmd(t, cmd)
	if s := stderr.String(); !strings.Contains(s, "warning: tasks are kept in memory and lost on a restart") || !strings.Contains(s, "/dev/null") {
		t.Errorf("toolc serve's standard error does not say where its tasks went:\n%s", s)
	}
	if r := toolc(t, ".", "health", url+"/healthz"); r.status != 0 {
		t.Errorf("toolc health of a server with no task file: %d %q %q", r.status, r.stdout, r.stderr)
	}
	// An explicit store that cannot be opened is still a usage error.
	r := toolc(t, ".", "serve", "--http", "127.0.0.1:0", "--task-store", "file:/dev/null/state/t.db", "--bundle", b)
	if r.status != exitUsage || !strings.Contains(r.stderr, "--task-store file:/dev/null/state/t.db") {
		t.Errorf("toolc serve --task-store of a path that cannot be made: %d %q", r.status, r.stderr)
	}
}

// TestBundleCarriesContent: a bundle carries the files that its prompts,
// resources and skills serve, and a server of the bundle in a directory
// with no sources and no go command serves them, each as it was.
func TestBundleCarriesContent(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	files := map[string]string{
		"api/content.cue": `package api

resources: guide: {uri: "docs://guide", description: "The guide", file: "guide.md"}
prompts: logo: {
	description: "Look at the logo"
	messages: [{role: "user", image: "assets/logo.png"}]
}
skills: "git-flow": {}
`,
		"api/guide.md":                            "# Guide\n",
		"api/assets/logo.png":                     "\x89PNG\r\n\x1a\nlogo",
		"api/skills/git-flow/SKILL.md":            "---\nname: git-flow\ndescription: Branch and merge as the team does\n---\n# Git flow\n",
		"api/skills/git-flow/references/MERGE.md": "Squash, then merge.\n",
	}
	for name, data := range files {
		writeDevFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	cmd := exec.Command(toolcBin, "bundle", "-o", out, "./...")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("toolc bundle: %v\n%s", err, b)
	}
	for _, name := range []string{"content/svc/guide.md", "content/svc/assets/logo.png", "content/svc/skills/git-flow/SKILL.md", "content/svc/skills/git-flow/references/MERGE.md"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(name))); err != nil {
			t.Errorf("the bundle lacks %s: %v", name, err)
		}
	}

	url, stderr := startServeCmd(t, noGoCmd(t, "serve", "--http", "127.0.0.1:0", "--bundle", out))
	client := mcp.NewClient(&mcp.Implementation{Name: "bundle-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	defer session.Close()
	for uri, want := range map[string]string{
		"docs://guide":                         files["api/guide.md"],
		"skill://git-flow/SKILL.md":            files["api/skills/git-flow/SKILL.md"],
		"skill://git-flow/references/MERGE.md": files["api/skills/git-flow/references/MERGE.md"],
	} {
		r, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != want {
			t.Errorf("resources/read %s = %+v, %v; want %q\n%s", uri, r, err, want, stderr)
		}
	}
	p, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "logo"})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("prompts/get logo = %+v, %v\n%s", p, err, stderr)
	}
	if img, ok := p.Messages[0].Content.(*mcp.ImageContent); !ok || string(img.Data) != files["api/assets/logo.png"] || img.MIMEType != "image/png" {
		t.Errorf("prompts/get logo = %+v, want the logo", p.Messages[0].Content)
	}

	// A content file changed after toolc bundle is refused, as a handler
	// is.
	damaged := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(damaged, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(damaged, "content/svc/guide.md"), []byte("# Not the guide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := noGoCmd(t, "serve", "--http", "127.0.0.1:0", "--bundle", damaged).CombinedOutput()
	if !strings.Contains(string(b), "content/svc/guide.md has sha256") {
		t.Errorf("toolc serve of a bundle with a changed content file: %v\n%s", err, b)
	}
}
