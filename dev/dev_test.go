package dev_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/testmodule"
	"github.com/toolc/toolc/internal/testsync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// The tests run the daemon in-process on a project of its own: a Go module
// in a temporary directory that requires toolc through a replace directive,
// as a user's project would. Its handler builds share the Go build cache,
// so each takes a few seconds; the tests build as few times as they can.

// wait bounds every wait for the daemon. A handler build takes seconds on
// a loaded two-core machine; a contract reload, milliseconds.
const wait = 2 * time.Minute

// newProject writes dev/testdata/project.txtar into a temporary directory
// and makes its go.mod and go.sum complete, so that no build changes them.
func newProject(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return testmodule.FromTxtar(t, root, filepath.Join("testdata", "project.txtar"))
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// replace replaces old, which must occur, with new in s.
func replace(t testing.TB, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q is not in\n%s", old, s)
	}
	return strings.Replace(s, old, new, 1)
}

// Edits of the project's contract and handler.
const (
	messageField = `message: {type: "string", description: "Text to send back"}`
	suffixField  = `suffix: {type: "string", description: "Text to append", required: false, default: "!"}`
	slowTool     = "\t\tslow: {"
	shoutTool    = `shout: {
			description: "Shout a message back"
			request: fields: message: {type: "string", description: "Text to shout"}
		}
`
	handlerVersion = `const version = "v1"`
	echoBody       = `plugins.Text(version + ":" + r.Message + r.Suffix)`
	handlerMain    = "func main() {\n"
)

func withVersion(t testing.TB, src, v string) string {
	return replace(t, src, handlerVersion, fmt.Sprintf("const version = %q", v))
}

// harness runs a daemon on a project until the test ends. Its runtime
// runs one call at a time, so that a test can keep a call waiting.
type harness struct {
	t        testing.TB
	dir      string
	contract string // api/svc.cue
	handler  string // handler/main.go
	rt       *runtime.Runtime
	d        *dev.Daemon
	status   *testsync.Buffer
	mark     int // where the status output of the current step begins
}

func start(t testing.TB, dir string, patterns ...string) *harness {
	t.Helper()
	return startGrace(t, dir, wait, patterns...)
}

// startGrace is start with the daemon's grace period for the calls in
// flight on a replaced plugin.
func startGrace(t testing.TB, dir string, grace time.Duration, patterns ...string) *harness {
	t.Helper()
	h := &harness{
		t:        t,
		dir:      dir,
		contract: filepath.Join(dir, "api", "svc.cue"),
		handler:  filepath.Join(dir, "handler", "main.go"),
		rt:       runtime.New(runtime.Options{CallTimeout: wait, MaxConcurrentCalls: 1}),
		status:   &testsync.Buffer{},
	}
	d, err := dev.New(dev.Options{
		Dir:      dir,
		Patterns: patterns,
		Runtime:  h.rt,
		Status:   h.status,
		CacheDir: filepath.Join(t.TempDir(), "handlers"),
		Host:     host.Options{Stderr: h.status},
		Grace:    grace,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	ctx, cancel := context.WithCancel(context.Background())
	if err := d.Start(ctx); err != nil {
		cancel()
		t.Fatalf("Start: %v\n%s", err, h.status)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Run did not return after its context ended")
		}
		rpc.CleanupClients()
		if t.Failed() || testing.Verbose() {
			t.Logf("status output:\n%s", h.status)
		}
	})
	h.expect(`toolc dev: reloaded in \S+: tools \+echo \+slow; compile \S+, build \S+ \(svc\), start \S+, swap \S+\n`)
	return h
}

// on returns the harness for a subtest.
func (h *harness) on(t testing.TB) *harness {
	c := *h
	c.t = t
	return &c
}

// step marks the start of a step: expect looks at the status output
// after the mark.
func (h *harness) step() {
	h.mark = len(h.status.String())
	for {
		select {
		case <-h.d.Reloaded():
		default:
			return
		}
	}
}

// write writes a file of the project as a new step.
func (h *harness) write(path, data string) {
	h.t.Helper()
	h.step()
	writeFile(h.t, path, data)
}

// expect waits until the status output of the step matches pattern, and
// returns the output.
func (h *harness) expect(pattern string) string {
	h.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.After(wait)
	for {
		out := h.status.String()[h.mark:]
		if re.MatchString(out) {
			return out
		}
		select {
		case <-h.d.Reloaded():
		case <-time.After(100 * time.Millisecond): // Status may be written after the signal's send
		case <-deadline:
			h.t.Fatalf("the status output never matched %q; it is:\n%s", pattern, out)
		}
	}
}

// quiet is how long the daemon must not reload for a test to take the
// state it serves as final: many times the watcher's debounce.
const quiet = 500 * time.Millisecond

// settle waits until cond holds and no reload has happened for quiet.
func (h *harness) settle(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(wait)
	for {
		idle, poll := (<-chan time.Time)(nil), time.After(100*time.Millisecond)
		if cond() {
			idle, poll = time.After(quiet), nil
		}
		select {
		case <-h.d.Reloaded():
		case <-idle:
			return
		case <-poll:
		case <-deadline:
			h.t.Fatalf("never settled with %s; the status output is:\n%s", what, h.status.String()[h.mark:])
		}
	}
}

// call calls a tool and returns its text.
func (h *harness) call(tool string, args any) string {
	h.t.Helper()
	data, _ := json.Marshal(args)
	res, err := h.rt.Call(context.Background(), tool, data)
	if err != nil {
		h.t.Fatalf("call %s: %v", tool, err)
	}
	if res.IsError || len(res.Content) != 1 {
		h.t.Fatalf("call %s: %+v", tool, res)
	}
	return res.Content[0].Text
}

// callAsync starts a call, and sends its text, or what went wrong.
func (h *harness) callAsync(tool string, args any) <-chan string {
	out := make(chan string, 1)
	go func() {
		data, _ := json.Marshal(args)
		res, err := h.rt.Call(context.Background(), tool, data)
		switch {
		case err != nil:
			out <- err.Error()
		case res.IsError || len(res.Content) != 1:
			out <- fmt.Sprintf("%+v", res)
		default:
			out <- res.Content[0].Text
		}
	}()
	return out
}

// waitForFile waits until a handler writes path.
func waitForFile(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond) // no event: the file is the handler's only sign
	}
}

func (h *harness) wantCall(tool string, args any, want string) {
	h.t.Helper()
	if got := h.call(tool, args); got != want {
		h.t.Errorf("call %s = %q, want %q", tool, got, want)
	}
}

func (h *harness) tools() []string {
	var names []string
	for _, info := range h.rt.Snapshot().Tools() {
		names = append(names, info.Tool.Name)
	}
	slices.Sort(names)
	return names
}

func (h *harness) wantTools(want ...string) {
	h.t.Helper()
	if got := h.tools(); !slices.Equal(got, want) {
		h.t.Errorf("tools = %v, want %v", got, want)
	}
}

func (h *harness) description(tool string) string {
	for _, info := range h.rt.Snapshot().Tools() {
		if info.Tool.Name == tool {
			return info.Tool.Description
		}
	}
	return ""
}

// TestDaemon walks one daemon through the edits of a working session and
// every fault the design names, in order, asserting after each what is
// served and what the status output says. The handler is rebuilt four
// times in all.
func TestDaemon(t *testing.T) {
	h := start(t, newProject(t))
	contract := readFile(t, h.contract)
	handler := readFile(t, h.handler)
	h.wantTools("echo", "slow")
	h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi")

	t.Run("add a field", func(t *testing.T) {
		h := h.on(t)
		contract = replace(t, contract, messageField, messageField+"\n\t\t\t\t"+suffixField)
		h.write(h.contract, contract)
		out := h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`)
		if strings.Contains(out, "build") {
			t.Errorf("a contract edit rebuilt the handler:\n%s", out)
		}
		h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi!") // the default reaches the handler
	})

	t.Run("add a tool", func(t *testing.T) {
		h := h.on(t)
		contract = replace(t, contract, slowTool, "\t\t"+shoutTool+slowTool)
		h.write(h.contract, contract)
		h.expect(`tools \+shout; compile \S+, swap \S+\n`)
		h.wantTools("echo", "shout", "slow")
		h.wantCall("shout", map[string]string{"message": "hi"}, "v1:HI")
	})

	t.Run("half-written file", func(t *testing.T) {
		h := h.on(t)
		h.write(h.contract, contract[:len(contract)/2])
		h.expect(`(?s)api/svc.cue:\d+:\d+: .*errors?; still serving the last good contracts\n`)
		h.wantTools("echo", "shout", "slow")
		h.wantCall("shout", map[string]string{"message": "hi"}, "v1:HI")
	})

	t.Run("syntax error mid-edit", func(t *testing.T) {
		h := h.on(t)
		h.write(h.contract, replace(t, contract, `"Shout a message back"`, `"Shout a message back`))
		h.expect(`(?s)api/svc.cue:\d+:\d+: .*still serving the last good contracts\n`)
		h.wantTools("echo", "shout", "slow")
	})

	t.Run("numbers beyond 64 bits", func(t *testing.T) {
		// Each once crashed the daemon: the catalog's fingerprint met +Inf.
		for _, edit := range []string{
			`maxLength: 99999999999999999999999}`,
			`enum: ["a"], examples: [1e400]}`,
		} {
			h := h.on(t)
			h.write(h.contract, replace(t, contract, messageField, strings.TrimSuffix(messageField, "}")+", "+edit+`
				count: {type: "number", description: "Count", required: false, default: 1e309}`))
			h.expect(`(?s)api/svc.cue:\d+:\d+: error: .*\[(bounds|example)\].*api/svc.cue:\d+:\d+: error: default of request field "count" .* is 1e\+309, which is beyond the range of a number.*still serving the last good contracts\n`)
			h.wantTools("echo", "shout", "slow")
			h.wantCall("shout", map[string]string{"message": "hi"}, "v1:HI")
		}
	})

	t.Run("fix", func(t *testing.T) {
		h := h.on(t)
		contract = replace(t, contract, `"Shout a message back"`, `"Shout a message back, louder"`)
		h.write(h.contract, contract)
		h.expect(`toolc dev: reloaded in \S+: tools ~shout; compile`)
		if got := h.description("shout"); got != "Shout a message back, louder" {
			t.Errorf("shout's description = %q", got)
		}
	})

	t.Run("remove a tool", func(t *testing.T) {
		h := h.on(t)
		contract = regexp.MustCompile(`(?s)\t\tshout: \{.*?\n\t\t\}\n`).ReplaceAllString(contract, "")
		h.write(h.contract, contract)
		h.expect(`tools -shout; compile`)
		h.wantTools("echo", "slow")
	})

	t.Run("deleted contract directory", func(t *testing.T) {
		h := h.on(t)
		h.step()
		if err := os.RemoveAll(filepath.Dir(h.contract)); err != nil {
			t.Fatal(err)
		}
		h.expect(`toolc dev: pattern "\./\.\.\.": matched no CUE packages; still serving the last good contracts\n`)
		h.wantTools("echo", "slow")
		h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi!")

		h.write(h.contract, contract)
		out := h.expect(`toolc dev: reloaded in \S+: tools unchanged; compile \S+, swap \S+\n`)
		if strings.Contains(out, "build") {
			t.Errorf("recreating the contract rebuilt the unchanged handler:\n%s", out)
		}
		h.wantTools("echo", "slow")
	})

	t.Run("handler that no longer compiles", func(t *testing.T) {
		h := h.on(t)
		h.write(h.handler, replace(t, withVersion(t, handler, "broken"), "r.Message", "r.Mesage"))
		h.expect(`(?s)building the handler of service "svc": exit status 1\n.*main\.go:\d+:\d+: r\.Mesage undefined.*reload failed after \S+ \((?:compile|build).*\); still serving the last good state\n`)
		h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi!")
	})

	t.Run("handler edit with calls in flight", func(t *testing.T) {
		// A slow call runs on the old plugin and a second waits for the
		// runtime's one slot, having looked up its tool before the
		// reload. The first finishes on the old plugin; the second runs
		// on the new one, though the old one no longer takes calls.
		h := h.on(t)
		release := filepath.Join(t.TempDir(), "release")
		slow := h.callAsync("slow", map[string]string{"release": release})
		waitForFile(t, release+".started")
		queued := h.callAsync("echo", map[string]string{"message": "hi"})

		h.write(h.handler, withVersion(t, handler, "v2"))
		h.expect(`toolc dev: reloaded in \S+: tools unchanged; handlers of svc rebuilt; build \S+ \(svc\), start \S+, swap \S+\n`)
		select {
		case got := <-slow:
			t.Fatalf("the call in flight returned %q before it was released", got)
		case got := <-queued:
			t.Fatalf("the queued call returned %q while the slot was taken", got)
		default:
		}
		writeFile(t, release, "")
		for _, c := range []struct {
			name string
			res  <-chan string
			want string
		}{{"in flight on the replaced plugin", slow, "v1:released"}, {"queued", queued, "v2:hi!"}} {
			select {
			case got := <-c.res:
				if got != c.want {
					t.Errorf("the call %s = %q, want %q", c.name, got, c.want)
				}
			case <-time.After(wait):
				t.Fatalf("the call %s never returned", c.name)
			}
		}
		h.wantCall("echo", map[string]string{"message": "hi"}, "v2:hi!")
	})

	t.Run("plugin that crashes on start", func(t *testing.T) {
		h := h.on(t)
		crash := replace(t, withVersion(t, handler, "crash"), handlerMain,
			handlerMain+"\tif version != \"\" {\n\t\tprintln(\"handler: crashing on start\")\n\t\tos.Exit(3)\n\t}\n")
		h.write(h.handler, crash)
		h.expect(`(?s)starting the handler of service "svc": .*reload failed after \S+ \((?:compile|build).*\); still serving the last good state\n`)
		h.wantCall("echo", map[string]string{"message": "hi"}, "v2:hi!")
		h.expect(`\[svc\] handler: crashing on start\n`) // the plugin's stderr, which may come last
	})

	t.Run("contract edit while the handler is broken", func(t *testing.T) {
		h := h.on(t)
		// The crashed build is not retried for an edit that does not
		// touch the handler: the contract reloads on the last good plugin.
		contract = replace(t, contract, `"Echo a message back"`, `"Echo a message back to the caller"`)
		h.write(h.contract, contract)
		out := h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`)
		if strings.Contains(out, "build") {
			t.Errorf("a contract edit rebuilt the handler:\n%s", out)
		}
		h.wantCall("echo", map[string]string{"message": "hi"}, "v2:hi!")
	})

	t.Run("recovers on the next good save", func(t *testing.T) {
		h := h.on(t)
		h.write(h.handler, withVersion(t, handler, "v3"))
		h.expect(`toolc dev: reloaded in \S+: tools unchanged; handlers of svc rebuilt; build`)
		h.wantCall("echo", map[string]string{"message": "hi"}, "v3:hi!")
	})

	t.Run("handler edit under a broken contract", func(t *testing.T) {
		h := h.on(t)
		// A handler and a broken contract saved together: the handler is
		// built once the contract is fixed, though that save touches no
		// Go file.
		h.step()
		writeFile(t, h.handler, withVersion(t, handler, "v4"))
		writeFile(t, h.contract, contract[:len(contract)/3])
		h.expect(`still serving the last good contracts\n`)
		h.write(h.contract, contract)
		h.expect(`toolc dev: reloaded in `)
		h.wantCall("echo", map[string]string{"message": "hi"}, "v4:hi!")
	})
}

// writeLock records the project's contracts in its toolc.lock, as toolc
// lock does.
func writeLock(t testing.TB, dir string) {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if res.HasErrors() {
		t.Fatalf("the project does not compile: %v", res.Diagnostics)
	}
	if err := lock.FromCatalog(res.Catalog).WriteFile(filepath.Join(dir, lock.FileName)); err != nil {
		t.Fatal(err)
	}
}

// TestLock: with a toolc.lock, the daemon holds the contracts to it as
// toolc check does. A breaking edit keeps the last good contracts serving
// until the lock accepts it, and editing the lock is a reload.
func TestLock(t *testing.T) {
	dir := newProject(t)
	writeLock(t, dir)
	h := start(t, dir, "./...")

	// A stricter request breaks every client that sends a longer message.
	h.step()
	h.write(h.contract, replace(t, readFile(t, h.contract), messageField, `message: {type: "string", description: "Text to send back", maxLength: 5}`))
	h.expect(`\[stable-name\]\n(.*\n)*toolc dev: 1 error; still serving the last good contracts\n`)
	h.wantCall("echo", map[string]string{"message": "longer than five"}, "v1:longer than five")

	// toolc lock accepts it.
	h.step()
	writeLock(t, dir)
	h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`)
	res, err := h.rt.Call(context.Background(), "echo", json.RawMessage(`{"message":"longer than five"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "at most 5") {
		t.Errorf("after the lock accepted maxLength 5, a longer message got %+v, %v", res, err)
	}

	// Without a lock, nothing holds the contracts: the rule is off.
	h.step()
	if err := os.Remove(filepath.Join(dir, lock.FileName)); err != nil {
		t.Fatal(err)
	}
	h.write(h.contract, replace(t, readFile(t, h.contract), "maxLength: 5", "maxLength: 3"))
	h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`)
}

// TestRenamesAndDeletions serves the contract directory by name, not with
// a ./... pattern: a storm of renames ends in the right state after a few
// reloads, and the directory deleted and created again is seen.
func TestRenamesAndDeletions(t *testing.T) {
	h := start(t, newProject(t), "./api")
	contract := readFile(t, h.contract)
	other := filepath.Join(filepath.Dir(h.contract), "svc.cue.off")
	writeFile(t, other, replace(t, contract, `"Echo a message back"`, `"Echo, from the other file"`))
	tmp := filepath.Join(filepath.Dir(h.contract), "swap.tmp")

	// The contract renamed back and forth a hundred times, as fast as
	// the test can: swap two files' contents through renames.
	h.step()
	for range 101 {
		for _, mv := range [][2]string{{h.contract, tmp}, {other, h.contract}, {tmp, other}} {
			if err := os.Rename(mv[0], mv[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.settle("the contract of the other file", func() bool { return h.description("echo") == "Echo, from the other file" })
	h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi")
	// The storm lasts milliseconds, a few debounce periods on a loaded
	// machine: a handful of reloads, not hundreds.
	if n := strings.Count(h.status.String()[h.mark:], "toolc dev:"); n > 10 {
		t.Errorf("%d status lines for one rename storm:\n%s", n, h.status.String()[h.mark:])
	}

	t.Run("directory rename storm", func(t *testing.T) {
		// The contract's directory, renamed away and back: it ends where
		// it was, still watched.
		h := h.on(t)
		api := filepath.Dir(h.contract)
		away := filepath.Join(h.dir, "_api") // a name that patterns and the watcher skip
		h.step()
		for range 50 {
			for _, mv := range [][2]string{{api, away}, {away, api}} {
				if err := os.Rename(mv[0], mv[1]); err != nil {
					t.Fatal(err)
				}
			}
		}
		h.settle("the contract of the other file", func() bool { return h.description("echo") == "Echo, from the other file" })
		if n := strings.Count(h.status.String()[h.mark:], "toolc dev:"); n > 10 {
			t.Errorf("%d status lines for one storm of directory renames:\n%s", n, h.status.String()[h.mark:])
		}
		h.write(h.contract, replace(t, readFile(t, h.contract), `"Echo, from the other file"`, `"Echo, after the storms"`))
		h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile`)
		if got := h.description("echo"); got != "Echo, after the storms" {
			t.Errorf("after an edit, echo's description = %q", got)
		}
	})

	t.Run("handler directory away and back", func(t *testing.T) {
		// The handler's package moved away (as with the project's root,
		// which holds it) and back: the running build serves on, nothing
		// is built while it is away, and nothing is rebuilt when it is
		// back as it was.
		h := h.on(t)
		handler := filepath.Join(h.dir, "handler")
		away := filepath.Join(h.dir, "_handler") // a name that patterns and the watcher skip
		h.step()
		if err := os.Rename(handler, away); err != nil {
			t.Fatal(err)
		}
		h.expect(`toolc dev: the handler package of svc does not exist; still serving its running build\n`)
		h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi")
		h.step()
		if err := os.Rename(away, handler); err != nil {
			t.Fatal(err)
		}
		if out := h.expect(`toolc dev: the handler of svc is unchanged: the build inputs are those of the running build; nothing rebuilt\n`); regexp.MustCompile(`build \S+ \(svc\)`).MatchString(out) {
			t.Errorf("the handler was built:\n%s", out)
		}
		h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi")
	})

	t.Run("deleted directory", func(t *testing.T) {
		h := h.on(t)
		api := filepath.Dir(h.contract)
		contract := readFile(t, h.contract)
		h.step()
		if err := os.RemoveAll(api); err != nil {
			t.Fatal(err)
		}
		h.expect(`toolc dev: pattern "\./api": no such file or directory; still serving the last good contracts\n`)
		h.wantTools("echo", "slow")
		h.wantCall("echo", map[string]string{"message": "hi"}, "v1:hi")

		h.write(h.contract, replace(t, contract, `description: "Echo`, `description: "Back again: echo`))
		h.expect(`toolc dev: reloaded in \S+: tools ~echo; compile \S+, swap \S+\n`)
		if got := h.description("echo"); !strings.HasPrefix(got, "Back again") {
			t.Errorf("after the directory came back, echo's description = %q", got)
		}
	})
}

// TestSoak reloads edited contracts many times, with an MCP client
// following the tool list, and checks that the daemon's heap after them
// is within 10% of its heap after the first 10. TOOLC_SOAK=1 runs the 200
// reloads of the design's target, TOOLC_SOAK=N runs N; by default, 30.
func TestSoak(t *testing.T) {
	reloads := 30
	if v := os.Getenv("TOOLC_SOAK"); v != "" {
		reloads = 200
		if n, err := strconv.Atoi(v); err == nil && n > 10 {
			reloads = n
		}
	}
	if os.Getenv("TOOLC_SOAK_PROFILES") != "" {
		defer func(rate int) { goruntime.MemProfileRate = rate }(goruntime.MemProfileRate)
		goruntime.MemProfileRate = 1 // every allocation, to see a few kilobytes grow
	}
	h := start(t, newProject(t))
	contract := readFile(t, h.contract)

	srv := mcpserver.New(h.rt, mcpserver.Options{})
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "soak"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	var base uint64
	for i := 1; i <= reloads; i++ {
		// Each edit changes a description; every third adds or removes
		// a tool, so that the MCP server's list changes shape too.
		desc := fmt.Sprintf("Echo a message back, edit %d", i)
		edited := replace(t, contract, `"Echo a message back"`, strconv.Quote(desc))
		if i%3 == 0 {
			edited = replace(t, edited, slowTool, "\t\t"+shoutTool+slowTool)
		}
		select {
		case <-changed:
		default:
		}
		h.write(h.contract, edited)
		select {
		case <-changed:
		case <-time.After(wait):
			t.Fatalf("reload %d: no list_changed notification; the status output is:\n%s", i, h.status.String()[h.mark:])
		}
		h.expect(`toolc dev: reloaded in `)
		if got := h.description("echo"); got != desc {
			t.Fatalf("reload %d: echo's description = %q", i, got)
		}
		h.status.Reset()
		if i%10 == 0 {
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 + btoi(i%3 == 0); len(list.Tools) != want {
				t.Fatalf("reload %d: tools/list has %d tools, want %d", i, len(list.Tools), want)
			}
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "svc_echo", Arguments: map[string]string{"message": "hi"}}); err != nil || res.IsError {
				t.Fatalf("reload %d: call: %v %+v", i, err, res)
			}
		}
		if i == 10 {
			base = heap()
			profile(t, "soak-10.heap")
		}
	}
	end := heap()
	profile(t, fmt.Sprintf("soak-%d.heap", reloads))
	growth := float64(int64(end)-int64(base)) / float64(base)
	t.Logf("live heap after 10 reloads: %.2f MiB; after %d: %.2f MiB (%+.1f%%)", mib(base), reloads, mib(end), 100*growth)
	if growth >= 0.10 {
		t.Errorf("the heap grew by %.1f%% from reload 10 to reload %d, over the 10%% bound", 100*growth, reloads)
	}
}

// heap returns the bytes of live heap after a full collection.
func heap() uint64 {
	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// profile writes a heap profile into $TOOLC_SOAK_PROFILES, if set.
func profile(t *testing.T, name string) {
	dir := os.Getenv("TOOLC_SOAK_PROFILES")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
