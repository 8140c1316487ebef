package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/testmodule"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The toolc dev tests run the real binary on a project of its own, the one
// in dev/testdata/project.txtar: a Go module in a temporary directory that
// requires toolc through a replace directive, as a user's would. Its
// handler builds share the Go build cache, so each takes a few seconds.

// devWait bounds each wait on toolc dev: a handler build takes seconds on
// a loaded two-core machine; a contract reload, milliseconds.
const devWait = 2 * time.Minute

// newDevProject writes the project into a temporary directory and makes
// its go.mod and go.sum complete, so that no build changes them.
func newDevProject(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return testmodule.FromTxtar(t, root, filepath.Join(root, "dev", "testdata", "project.txtar"))
}

func writeDevFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readDevFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mustReplace replaces old, which must occur, with new in s.
func mustReplace(t testing.TB, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q is not in\n%s", old, s)
	}
	return strings.Replace(s, old, new, 1)
}

// devServer is a running `toolc dev --http 127.0.0.1:0` and an MCP client
// connected to it that follows list_changed.
type devServer struct {
	t                 testing.TB
	dir               string
	contract, handler string // api/svc.cue and handler/main.go
	cache             string // TOOLC_CACHE
	cmd               *exec.Cmd
	exited            chan error
	stderr            *lockedBuffer
	url               string
	session           *mcp.ClientSession
	changed           chan time.Time // a list_changed notification's arrival
	mark              int            // where the current step's stderr begins
}

// startDev runs toolc dev in dir on the patterns, ./... if none.
func startDev(t testing.TB, dir string, patterns ...string) *devServer {
	t.Helper()
	s := &devServer{
		t:        t,
		dir:      dir,
		contract: filepath.Join(dir, "api", "svc.cue"),
		handler:  filepath.Join(dir, "handler", "main.go"),
		cache:    t.TempDir(),
		stderr:   &lockedBuffer{},
		changed:  make(chan time.Time, 100),
		exited:   make(chan error, 1),
	}
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	s.cmd = exec.Command(toolcBin, append([]string{"dev", "--http", "127.0.0.1:0"}, patterns...)...)
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), "TOOLC_CACHE="+s.cache)
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	lines := bufio.NewScanner(pipe)
	addr := regexp.MustCompile(`toolc dev: serving MCP on (http://\S+/mcp)`)
	for s.url == "" && lines.Scan() {
		fmt.Fprintln(s.stderr, lines.Text())
		if m := addr.FindStringSubmatch(lines.Text()); m != nil {
			s.url = m[1]
		}
	}
	if s.url == "" {
		t.Fatalf("toolc dev did not say where it serves:\n%s", s.stderr)
	}
	go func() {
		for lines.Scan() {
			fmt.Fprintln(s.stderr, lines.Text())
		}
		s.exited <- s.cmd.Wait()
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "toolc-dev-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.changed <- time.Now()
		},
	})
	s.session, err = client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v\n%s", s.url, err, s.stderr)
	}
	return s
}

// stop interrupts toolc dev, as Ctrl-C would, and checks that it exits
// cleanly and takes its handler plugins with it.
func (s *devServer) stop() {
	t := s.t
	if s.session != nil {
		s.session.Close()
	}
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGINT)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("toolc dev after SIGINT: %v", err)
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		t.Errorf("toolc dev did not stop after SIGINT")
	}
	out := s.stderr.String()
	if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") || strings.Contains(out, "DATA RACE") {
		t.Errorf("toolc dev showed a Go stack trace")
	}
	if pids := processesUnder(s.cache); len(pids) > 0 {
		t.Errorf("handler plugins %v still run after toolc dev exited", pids)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("toolc dev's standard error:\n%s", out)
	}
}

// processesUnder lists the processes whose executable is in dir (Linux
// only; elsewhere none).
func processesUnder(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// step begins a step: expect then reads stderr from here, and
// notifications that arrived before are dropped.
func (s *devServer) step() {
	s.mark = len(s.stderr.String())
	for {
		select {
		case <-s.changed:
		default:
			return
		}
	}
}

// write writes a file of the project as a new step, and returns when.
func (s *devServer) write(path, data string) time.Time {
	s.t.Helper()
	s.step()
	start := time.Now()
	writeDevFile(s.t, path, data)
	return start
}

// expect waits until toolc dev's stderr since the step matches pattern.
func (s *devServer) expect(pattern string) string {
	s.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(devWait)
	for {
		out := s.stderr.String()[s.mark:]
		if re.MatchString(out) {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("toolc dev's stderr never matched %q; it is:\n%s", pattern, out)
		}
		select {
		case err := <-s.exited:
			s.t.Fatalf("toolc dev exited: %v\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond): // no event says a line was written
		}
	}
}

// notified waits for a list_changed notification, and returns when it
// arrived.
func (s *devServer) notified() time.Time {
	s.t.Helper()
	select {
	case at := <-s.changed:
		return at
	case <-time.After(devWait):
		s.t.Fatalf("no list_changed notification; toolc dev's stderr is:\n%s", s.stderr.String()[s.mark:])
		return time.Time{}
	}
}

// notNotified checks that no list_changed notification came in the step.
func (s *devServer) notNotified() {
	s.t.Helper()
	select {
	case <-s.changed:
		s.t.Errorf("a list_changed notification for a reload that changed no tool")
	default:
	}
}

// tools returns tools/list, by name.
func (s *devServer) tools() map[string]*mcp.Tool {
	s.t.Helper()
	res, err := s.session.ListTools(context.Background(), nil)
	if err != nil {
		s.t.Fatalf("tools/list: %v", err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	return tools
}

func (s *devServer) wantTools(want ...string) map[string]*mcp.Tool {
	s.t.Helper()
	tools := s.tools()
	var names []string
	for name := range tools {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		s.t.Errorf("tools/list = %v, want %v", names, want)
	}
	return tools
}

func (s *devServer) call(tool string, args any) (string, error) {
	res, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", resultText(res))
	}
	return resultText(res), nil
}

func (s *devServer) wantCall(tool string, args any, want string) {
	s.t.Helper()
	got, err := s.call(tool, args)
	if err != nil || got != want {
		s.t.Errorf("call %s = %q, %v; want %q", tool, got, err, want)
	}
}

// inputProperties are the names of a tool's input schema's properties.
func inputProperties(t testing.TB, tool *mcp.Tool) []string {
	t.Helper()
	schema, ok := tool.InputSchema.(map[string]any)
	if !ok {
		t.Fatalf("%s's input schema is a %T", tool.Name, tool.InputSchema)
	}
	props, _ := schema["properties"].(map[string]any)
	var names []string
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Edits of the project's contract and handler.
const (
	devMessageField = `message: {type: "string", description: "Text to send back"}`
	devSuffixField  = `suffix: {type: "string", description: "Text to append", required: false, default: "!"}`
	devSlowTool     = "\t\tslow: {"
	devShoutTool    = `shout: {
			description: "Shout a message back"
			request: fields: message: {type: "string", description: "Text to shout"}
		}
`
	devVersion = `const version = "v1"`
)

// TestDev runs toolc dev and an MCP client through a working session:
// contract edits that add a field and a tool, break the contract and fix
// it, a handler edit, and then fifty reloads while clients call a tool
// without pause, none of whose calls may fail.
func TestDev(t *testing.T) {
	s := startDev(t, newDevProject(t))
	contract := readDevFile(t, s.contract)
	handler := readDevFile(t, s.handler)
	hi := map[string]string{"message": "hi"}

	tools := s.wantTools("svc_echo", "svc_slow")
	if got := inputProperties(t, tools["svc_echo"]); !slices.Equal(got, []string{"message"}) {
		t.Errorf("svc_echo's properties = %v", got)
	}
	s.wantCall("svc_echo", hi, "v1:hi")

	// Add a field: the new schema is listed, and its default reaches the
	// handler, which was not rebuilt.
	contract = mustReplace(t, contract, devMessageField, devMessageField+"\n\t\t\t\t"+devSuffixField)
	s.write(s.contract, contract)
	s.notified()
	tools = s.wantTools("svc_echo", "svc_slow")
	if got := inputProperties(t, tools["svc_echo"]); !slices.Equal(got, []string{"message", "suffix"}) {
		t.Errorf("after adding a field, svc_echo's properties = %v", got)
	}
	s.wantCall("svc_echo", hi, "v1:hi!")
	if out := s.expect(`reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`); strings.Contains(out, "build") {
		t.Errorf("a contract edit rebuilt the handler:\n%s", out)
	}

	// Add a tool.
	contract = mustReplace(t, contract, devSlowTool, "\t\t"+devShoutTool+devSlowTool)
	s.write(s.contract, contract)
	s.notified()
	s.wantTools("svc_echo", "svc_shout", "svc_slow")
	s.wantCall("svc_shout", hi, "v1:HI")
	s.expect(`reloaded in \S+: tools \+shout; compile`)

	// Break it: toolc dev says what is wrong and keeps serving.
	s.write(s.contract, mustReplace(t, contract, `"Shout a message back"`, `"Shout a message back`))
	s.expect(`(?s)api/svc.cue:\d+:\d+: error: .*\[syntax\].*still serving the last good contracts\n`)
	s.notNotified()
	s.wantTools("svc_echo", "svc_shout", "svc_slow")
	s.wantCall("svc_shout", hi, "v1:HI")

	// Fix it, with a change.
	contract = mustReplace(t, contract, `"Shout a message back"`, `"Shout a message back, louder"`)
	s.write(s.contract, contract)
	s.notified()
	if got := s.wantTools("svc_echo", "svc_shout", "svc_slow")["svc_shout"].Description; got != "Shout a message back, louder" {
		t.Errorf("after the fix, svc_shout's description = %q", got)
	}
	s.expect(`reloaded in \S+: tools ~shout; compile`)

	// Fifty reloads while four clients call without pause, and a handler
	// edit among them.
	var calls, failed atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.call("svc_echo", hi)
				calls.Add(1)
				if err != nil || !regexp.MustCompile(`^v\d:hi!$`).MatchString(got) {
					failed.Add(1)
					failures.Store(fmt.Sprintf("%q, %v", got, err), true)
				}
			}
		}()
	}

	s.write(s.handler, mustReplace(t, handler, devVersion, `const version = "v2"`))
	s.expect(`reloaded in \S+: tools unchanged; handlers of svc rebuilt; build \S+ \(svc\), start \S+, swap \S+\n`)
	s.notNotified()
	s.wantCall("svc_echo", hi, "v2:hi!")

	for i := 1; i <= 50; i++ {
		desc := fmt.Sprintf("Echo a message back, edit %d", i)
		s.write(s.contract, mustReplace(t, contract, `"Echo a message back"`, `"`+desc+`"`))
		s.notified()
		if got := s.tools()["svc_echo"].Description; got != desc {
			t.Fatalf("reload %d: svc_echo's description = %q, want %q", i, got, desc)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d calls during 50 contract reloads and a handler reload", calls.Load())
	if n := failed.Load(); n > 0 {
		failures.Range(func(k, _ any) bool { t.Errorf("failed call: %s", k); return true })
		t.Errorf("%d of %d calls failed across the reloads", n, calls.Load())
	}
	if calls.Load() < 100 {
		t.Errorf("only %d calls ran during the reloads", calls.Load())
	}
}

// BenchmarkDevEditToListChanged measures toolc dev from a contract save to
// the client's list_changed notification, debounce included: run it with
// -benchtime=50x for the design's 50 edits. It reports the median and the
// 95th percentile.
func BenchmarkDevEditToListChanged(b *testing.B) {
	s := startDev(b, newDevProject(b))
	contract := readDevFile(b, s.contract)
	s.wantCall("svc_echo", map[string]string{"message": "hi"}, "v1:hi")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		edited := mustReplace(b, contract, `"Echo a message back"`, fmt.Sprintf(`"Echo a message back, edit %d"`, i))
		start := s.write(s.contract, edited)
		lat = append(lat, s.notified().Sub(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat, "edit-to-list_changed")
}

// BenchmarkDevHandlerEdit measures toolc dev from a handler save to the
// first call that the new plugin answers, what of that is not the go build
// that toolc dev ran (from its status line), and beside them the bare
// `go build` of the same edit of the same package, in a copy of the
// project that toolc dev does not watch. TOOLC_BENCH_LOG=1 logs each
// iteration.
func BenchmarkDevHandlerEdit(b *testing.B) {
	s := startDev(b, newDevProject(b))
	handler := readDevFile(b, s.handler)
	bare := newDevProject(b)
	hi := map[string]string{"message": "hi"}
	s.wantCall("svc_echo", hi, "v1:hi")
	var reload, build, overhead []time.Duration
	run := time.Now().UnixNano() // versions that the build cache has not seen
	version := func(i int, what string) string {
		return mustReplace(b, handler, devVersion, fmt.Sprintf(`const version = "%s%d-%d"`, what, run, i))
	}

	// reloadOnce edits the handler and waits for the new plugin's answer.
	reloadOnce := func(i int) {
		want := fmt.Sprintf("b%d-%d:hi", run, i)
		start := s.write(s.handler, version(i, "b"))
		for {
			if got, err := s.call("svc_echo", hi); err == nil && got == want {
				break
			}
			if time.Since(start) > devWait {
				b.Fatalf("the new handler never answered:\n%s", s.stderr.String()[s.mark:])
			}
			time.Sleep(2 * time.Millisecond) // polling: no event says a new plugin serves
		}
		reload = append(reload, time.Since(start))
		// What toolc dev adds to its go build: the debounce, starting and
		// checking the plugin, the swap, and this loop's polling.
		m := regexp.MustCompile(`handlers of svc rebuilt; build (\S+) \(svc\)`).FindStringSubmatch(s.expect(`handlers of svc rebuilt; build \S+ \(svc\)`))
		took, err := time.ParseDuration(m[1])
		if err != nil {
			b.Fatal(err)
		}
		overhead = append(overhead, reload[len(reload)-1]-took)
	}
	// buildOnce makes the same edit, with a version string of its own,
	// in the unwatched copy, and runs go build there.
	buildOnce := func(i int) {
		writeDevFile(b, filepath.Join(bare, "handler", "main.go"), version(i, "bare"))
		start := time.Now()
		cmd := exec.Command("go", "build", "-o", filepath.Join(b.TempDir(), "handler"), ".")
		cmd.Dir = filepath.Join(bare, "handler")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		build = append(build, time.Since(start))
	}

	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first, so that neither always follows the
		// other's work on a busy machine.
		if i%2 == 0 {
			reloadOnce(i)
			buildOnce(i)
		} else {
			buildOnce(i)
			reloadOnce(i)
		}
		if os.Getenv("TOOLC_BENCH_LOG") != "" {
			b.Logf("reload %v (beyond its go build %v), bare go build %v", reload[i], overhead[i], build[i])
		}
	}
	b.StopTimer()
	reportPercentiles(b, reload, "handler-edit-to-serving")
	reportPercentiles(b, overhead, "beyond-its-go-build")
	reportPercentiles(b, build, "bare-go-build")
}

func reportPercentiles(b *testing.B, d []time.Duration, what string) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	pct := func(p float64) float64 {
		i := int(p*float64(len(d))+0.5) - 1
		return float64(d[min(max(i, 0), len(d)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), what+"-p50-ms")
	b.ReportMetric(pct(0.95), what+"-p95-ms")
}

// TestDevPatternsMatchNothing: toolc dev refuses to start on patterns that
// match no contract, rather than serve nothing.
func TestDevPatternsMatchNothing(t *testing.T) {
	dir := writeFiles(t, map[string]string{"README": "no contracts here"})
	for _, args := range [][]string{{"dev", "--http", "127.0.0.1:0"}, {"dev", "--http", "127.0.0.1:0", "./missing"}} {
		r := toolc(t, dir, args...)
		if r.status != 2 || !strings.Contains(r.stderr, "toolc dev: ") || strings.Contains(r.stderr, "serving") {
			t.Errorf("toolc %s = %d\n%s", strings.Join(args, " "), r.status, r.stderr)
		}
	}
}

// TestDevContentEdits: under toolc dev, an edit of a file that a resource
// or a skill serves reaches the clients subscribed to it as
// notifications/resources/updated (go-sdk at 2025-11-25, the last
// revision with resources/subscribe), and the next read has the new
// content; the contract is not touched.
func TestDevContentEdits(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	writeDevFile(t, filepath.Join(dir, "api", "content.cue"), `package api

resources: guide: {uri: "docs://guide", description: "The guide", file: "guide.md"}
skills: "git-flow": {}
`)
	writeDevFile(t, filepath.Join(dir, "api", "guide.md"), "# Guide v1\n")
	writeDevFile(t, filepath.Join(dir, "api", "skills", "git-flow", "SKILL.md"), "---\nname: git-flow\ndescription: Branch as the team does\n---\nv1\n")
	s := startDev(t, dir)

	updated := make(chan string, 100)
	client := mcp.NewClient(&mcp.Implementation{Name: "subscriber", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for _, uri := range []string{"docs://guide", "skill://git-flow/SKILL.md"} {
		// Held until the first load is over.
		if err := session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v\n%s", uri, err, s.stderr)
		}
	}
	read := func(uri string) string {
		r, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("resources/read %s: %+v %v\n%s", uri, r, err, s.stderr)
		}
		return r.Contents[0].Text
	}
	if got := read("docs://guide"); got != "# Guide v1\n" {
		t.Fatalf("docs://guide = %q", got)
	}
	waitUpdated := func(want string) {
		t.Helper()
		for {
			select {
			case uri := <-updated:
				if uri == want {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no notifications/resources/updated for %s\n%s", want, s.stderr)
			}
		}
	}
	for _, tc := range []struct{ file, uri, content string }{
		{"api/guide.md", "docs://guide", "# Guide v2\n"},
		{"api/skills/git-flow/SKILL.md", "skill://git-flow/SKILL.md", "---\nname: git-flow\ndescription: Branch as the team does\n---\nv2\n"},
	} {
		writeDevFile(t, filepath.Join(dir, filepath.FromSlash(tc.file)), tc.content)
		waitUpdated(tc.uri)
		if got := read(tc.uri); got != tc.content {
			t.Errorf("after the edit, %s = %q, want %q", tc.uri, got, tc.content)
		}
	}
}
