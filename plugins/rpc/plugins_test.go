package rpc

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"

	"github.com/toolc/toolc/internal/testsync"
)

// bin holds the test plugins, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	if os.Getenv(hostHelperEnv) != "" {
		runHostHelper()
		return
	}
	dir, err := os.MkdirTemp("", "toolc-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	build := exec.Command("go", "build", "-o", dir, "../internal/testplugin/...")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building test plugins:", err)
		os.Exit(1)
	}
	code := m.Run()
	CleanupClients()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startToolbox starts the toolbox plugin for one test, and kills it after.
func startToolbox(t testing.TB, edit ...func(*ClientConfig)) (*Client, *testsync.Buffer) {
	t.Helper()
	stderr := &testsync.Buffer{}
	cfg := ClientConfig{Service: "toolbox", Path: filepath.Join(bin, "toolbox"), Stderr: stderr}
	for _, e := range edit {
		e(&cfg)
	}
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	return c, stderr
}

func call(t *testing.T, c *Client, tool, args string) *plugins.Result {
	t.Helper()
	res, err := c.Call(context.Background(), tool, "call-1", json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(r *plugins.Result) string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func TestDescribeListsTools(t *testing.T) {
	c, _ := startToolbox(t)
	want := []string{"ask", "big", "boom", "caller", "contents", "deadline", "echo", "environ", "error", "events", "fail", "flood", "getenv", "prompt:greet", "resource:page", "say", "stderr", "trace", "wait"}
	if got := c.Tools(); !reflect.DeepEqual(got, want) {
		t.Errorf("Tools() = %v, want %v", got, want)
	}
	if c.Pid() <= 0 || c.Exited() {
		t.Errorf("Pid() = %d, Exited() = %t for a running plugin", c.Pid(), c.Exited())
	}
}

func TestTypedDecodeAndJSONResult(t *testing.T) {
	c, _ := startToolbox(t)
	res := call(t, c, "echo", `{"message":"hi","count":3,"tags":["a","b"],"inner":{"flag":true}}`)
	if res.IsError {
		t.Fatalf("IsError result: %s", text(res))
	}
	want := `{"call_id":"call-1","req":{"message":"hi","count":3,"tags":["a","b"],"inner":{"flag":true}}}`
	sc, ok := res.StructuredContent.(json.RawMessage)
	if !ok || string(sc) != want {
		t.Errorf("StructuredContent = %#v, want json.RawMessage %s", res.StructuredContent, want)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != want {
		t.Errorf("Content = %+v, want one text copy of the JSON", res.Content)
	}
}

// TestOlderProtocolPeers holds a host and a plugin of this SDK to version 1
// of the protocol with a peer that speaks no newer one.
func TestOlderProtocolPeers(t *testing.T) {
	t.Run("plugin of version 1", func(t *testing.T) {
		c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Path, cfg.Args = filepath.Join(bin, "raw"), []string{"-protocol", "1"} })
		if c.version != 1 {
			t.Errorf("agreed on version %d, want 1", c.version)
		}
		if res := call(t, c, "say", `{"Message":"hi"}`); text(res) != `{"Message":"hi"}` {
			t.Errorf("say = %+v", res)
		}
	})
	t.Run("host of version 1", func(t *testing.T) {
		want := `{"call_id":"c","req":{"message":"hi","count":0,"tags":null,"inner":null}}`
		for _, version := range []int{1, 2} {
			rpc, agreed := dialToolbox(t, version)
			if agreed != version {
				t.Fatalf("offered only version %d, agreed on %d", version, agreed)
			}
			stream, err := rpc.Call(context.Background(), &pb.CallRequest{Tool: "echo", ArgumentsJson: []byte(`{"message":"hi"}`), CallId: "c"})
			if err != nil {
				t.Fatal(err)
			}
			ev, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			r := ev.GetResult()
			if string(r.GetStructuredContentJson()) != want {
				t.Fatalf("version %d: structured content %s", version, r.GetStructuredContentJson())
			}
			// Version 1 has the text copy cross the boundary; version 2
			// leaves it to the host, which rebuilds it.
			if version == 1 && (r.StructuredAsText || len(r.Content) != 1 || r.Content[0].GetText().GetText() != want) {
				t.Errorf("version 1: %v, want the text copy in content", r)
			}
			if version == 2 && (!r.StructuredAsText || len(r.Content) != 0) {
				t.Errorf("version 2: %v, want structured_as_text and no content", r)
			}
			if got := resultFromPB(r); len(got.Content) != 1 || got.Content[0].Text != want {
				t.Errorf("version %d: host sees content %+v", version, got.Content)
			}
		}
	})
}

// TestEventsOnlyWhenTheHostListens checks that a host of version 2 that
// passes no event callback gets no events sent, and one that does gets
// them all.
func TestEventsOnlyWhenTheHostListens(t *testing.T) {
	rpc, _ := dialToolbox(t, 2)
	for _, listen := range []bool{false, true} {
		stream, err := rpc.Call(context.Background(), &pb.CallRequest{Tool: "events", ArgumentsJson: []byte(`{}`), Events: listen})
		if err != nil {
			t.Fatal(err)
		}
		events := 0
		for {
			ev, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetResult() != nil {
				break
			}
			events++
		}
		if want := map[bool]int{false: 0, true: 5}[listen]; events != want {
			t.Errorf("events %t: %d events crossed, want %d", listen, events, want)
		}
	}
}

// dialToolbox starts the toolbox plugin as a host that offers only version
// of the protocol would, and returns the raw client and the version agreed.
func dialToolbox(t *testing.T, version int) (pb.PluginClient, int) {
	t.Helper()
	rpc, pc := dialRaw(t, filepath.Join(bin, "toolbox"), version)
	desc, err := rpc.Describe(context.Background(), &pb.DescribeRequest{})
	if err != nil || int(desc.ProtocolVersion) != pc.NegotiatedVersion() {
		t.Fatalf("Describe = %v, %v; agreed on %d", desc, err, pc.NegotiatedVersion())
	}
	return rpc, pc.NegotiatedVersion()
}

// dialRaw starts the plugin at path with go-plugin and the generated client
// alone, offering one version of the protocol, and kills it after the test.
func dialRaw(t testing.TB, path string, version int) (pb.PluginClient, *plugin.Client) {
	t.Helper()
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{version: {pluginName: &grpcPlugin{}}},
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	t.Cleanup(pc.Kill)
	proto, err := pc.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Dispense(pluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(pb.PluginClient), pc
}

// TestBadArgumentsAreAToolError: arguments that the host let through but
// the handler's Go type cannot take get a tool error in words a model can
// act on, never Go's "json: cannot unmarshal"; Go's text goes to stderr.
func TestBadArgumentsAreAToolError(t *testing.T) {
	c, stderr := startToolbox(t)
	for _, tc := range []struct{ args, want string }{
		{`{"count":"three"}`, `invalid arguments for echo: field "count" must be an integer from -9223372036854775808 to 9223372036854775807`},
		{`{"count":99999999999999999999999}`, `invalid arguments for echo: field "count" must be an integer from -9223372036854775808 to 9223372036854775807`},
		{`{"tags":["a",1]}`, `invalid arguments for echo: item 1 of field "tags" must be a string`},
		{`[1]`, `invalid arguments for echo: they must be a JSON object of the tool's fields`},
	} {
		res := call(t, c, "echo", tc.args)
		if !res.IsError || text(res) != tc.want {
			t.Errorf("%s: got %q (isError %v), want the tool error %q", tc.args, text(res), res.IsError, tc.want)
		}
		if strings.Contains(text(res), "json:") || strings.Contains(text(res), "Go struct") {
			t.Errorf("%s: Go's decoding error reached the model: %q", tc.args, text(res))
		}
	}
	testsync.WaitFor(t, 5*time.Second, "Go's decoding error in the plugin's stderr", func() bool { return strings.Contains(stderr.String(), "json: cannot unmarshal") })
}

func TestEveryContentKindRoundTrips(t *testing.T) {
	c, _ := startToolbox(t)
	res := call(t, c, "contents", `{}`)
	size := int64(42)
	want := &plugins.Result{Content: []plugins.Content{
		{Type: "text", Text: "hello"},
		{Type: "image", Data: []byte{0x89, 'P', 'N', 'G', 0}, MIMEType: "image/png"},
		{Type: "audio", Data: []byte{'R', 'I', 'F', 'F', 0xff}, MIMEType: "audio/wav"},
		{Type: "resource_link", URI: "file:///report.pdf", Name: "report.pdf", Title: "Report", Description: "The report", MIMEType: "application/pdf", Size: &size},
		{Type: "resource", Resource: &plugins.ResourceContents{URI: "mem://notes.txt", MIMEType: "text/plain", Text: "some notes"}},
		{Type: "resource", Resource: &plugins.ResourceContents{URI: "mem://blob.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}},
		{Type: "resource", Resource: &plugins.ResourceContents{URI: "mem://empty.bin", MIMEType: "application/octet-stream", Blob: []byte{}}},
	}}
	if !reflect.DeepEqual(res, want) {
		got, _ := json.MarshalIndent(res, "", "  ")
		t.Errorf("got %s", got)
	}
}

func TestToolErrors(t *testing.T) {
	c, _ := startToolbox(t)
	for _, tc := range []struct{ tool, args, want string }{
		{"fail", `{"City":"Atlantis"}`, `no forecast for "Atlantis": try a nearby city`},
		{"error", `{}`, "the weather service is down"},
	} {
		res := call(t, c, tc.tool, tc.args)
		if !res.IsError || text(res) != tc.want {
			t.Errorf("%s: got IsError=%t %q, want a tool error %q", tc.tool, res.IsError, text(res), tc.want)
		}
	}
}

func TestPanicIsAToolErrorAndThePluginKeepsServing(t *testing.T) {
	c, stderr := startToolbox(t)
	res := call(t, c, "boom", `{}`)
	if !res.IsError || !strings.Contains(text(res), "kaboom") {
		t.Errorf("got IsError=%t %q, want a tool error with the panic message", res.IsError, text(res))
	}
	if res := call(t, c, "say", `{"Message":"still here"}`); text(res) != "still here" {
		t.Errorf("after the panic: %q", text(res))
	}
	testsync.WaitFor(t, 5*time.Second, "the stack on stderr", func() bool { return strings.Contains(stderr.String(), "[toolbox] toolc: tool boom panicked: kaboom") })
}

func TestEventsArriveInOrderBeforeTheResult(t *testing.T) {
	c, _ := startToolbox(t)
	var got []string
	res, err := c.Call(context.Background(), "events", "c", json.RawMessage(`{}`), func(e plugins.Event) {
		switch {
		case e.Progress != nil:
			got = append(got, fmt.Sprintf("progress %g/%g %s", e.Progress.Progress, e.Progress.Total, e.Progress.Message))
		case e.Log != nil:
			got = append(got, fmt.Sprintf("log %s %s", e.Log.Level, e.Log.Message))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, "result "+text(res))
	want := []string{"progress 1/3 one", "log info hello", "progress 2/3 two", "log warning careful", "progress 3/3 three", "result done"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// startWait starts the wait tool and returns once the handler is running.
func startWait(t *testing.T, ctx context.Context, c *Client, id string) <-chan error {
	t.Helper()
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		res, err := c.Call(ctx, "wait", id, json.RawMessage(`{}`), func(plugins.Event) { close(started) })
		if err == nil {
			err = fmt.Errorf("the call returned a result: %+v", res)
		}
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the call ended before the handler started: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not start")
	}
	return done
}

func TestCancelReachesTheHandler(t *testing.T) {
	c, stderr := startToolbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := startWait(t, ctx, c, "cancel-me")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the call did not return promptly after cancel")
	}
	testsync.WaitFor(t, 5*time.Second, "the handler to observe the cancel", func() bool {
		return strings.Contains(stderr.String(), "[toolbox] call cancel-me observed context canceled")
	})
}

func TestDeadlineCrosses(t *testing.T) {
	c, _ := startToolbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.Call(ctx, "deadline", "d", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		HasDeadline bool  `json:"has_deadline"`
		RemainingMS int64 `json:"remaining_ms"`
	}
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &got); err != nil {
		t.Fatal(err)
	}
	if !got.HasDeadline || got.RemainingMS <= 0 || got.RemainingMS > 5000 {
		t.Errorf("handler saw %+v, want a deadline within 5s", got)
	}

	// A deadline that passes ends the call with DeadlineExceeded.
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Call(ctx, "wait", "w", json.RawMessage(`{}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestKilledPluginFailsTheCall(t *testing.T) {
	c, _ := startToolbox(t)
	done := startWait(t, context.Background(), c, "k")
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "plugin call failed") {
			t.Errorf("err = %v, want a transport error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call hung after the plugin died")
	}
	if !c.Exited() {
		t.Error("Exited() = false after the call failed on a dead plugin")
	}
}

func TestUnknownToolIsAnError(t *testing.T) {
	c, _ := startToolbox(t)
	_, err := c.Call(context.Background(), "nope", "x", json.RawMessage(`{}`), nil)
	if err == nil || !strings.Contains(err.Error(), `no handler for tool "nope"`) {
		t.Errorf("err = %v", err)
	}
}

func TestStderrIsForwardedWithTheServicePrefix(t *testing.T) {
	c, stderr := startToolbox(t)
	call(t, c, "stderr", `{"Message":"hi there"}`)
	for _, want := range []string{"[toolbox] log: hi there\n", "[toolbox] os.Stderr: hi there\n", "[toolbox] stdout: hi there\n"} {
		testsync.WaitFor(t, 5*time.Second, fmt.Sprintf("%q", want), func() bool { return strings.Contains(stderr.String(), want) })
	}
}

func TestEnvWinsOverTheHostEnvironment(t *testing.T) {
	t.Setenv("TOOLC_TEST_VAR", "host")
	c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Env = []string{"TOOLC_TEST_VAR=config"} })
	if got := text(call(t, c, "getenv", `{"Name":"TOOLC_TEST_VAR"}`)); got != "config" {
		t.Errorf("plugin sees %q, want %q", got, "config")
	}
}

// TestPluginEnvironment starts a real plugin in a host whose environment
// holds toolc's secrets and others', and reads the environment of the
// plugin and of a program it starts: each holds what every plugin gets,
// what PassEnv names and Env, and none of the rest, whatever PassEnv says.
func TestPluginEnvironment(t *testing.T) {
	for k, v := range map[string]string{
		"TOOLC_TOKEN": "the-bearer-token", "TOOLC_STATE_KEY": "the-state-key", "CI_DEPLOY_KEY": "the-ci-secret",
		"MYAPP_API_KEY": "the-handler-key", "MYAPP_URL": "https://api.example", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
		"GOMEMLIMIT": "1GiB", "LANG": "C.UTF-8", "HOME": "/home/toolc", "TOOLC_CACHE": "/var/cache/toolc",
	} {
		t.Setenv(k, v)
	}
	c, _ := startToolbox(t, func(cfg *ClientConfig) {
		cfg.PassEnv = []string{"MYAPP_*", "TOOLC_TOKEN", "TOOLC_*"}
		cfg.Env = []string{"FROM_CONFIG=set", "LANG=en_GB.UTF-8"}
	})
	var got struct{ Self, Child []string }
	if err := json.Unmarshal(call(t, c, "environ", `{}`).StructuredContent.(json.RawMessage), &got); err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string][]string{"the plugin": got.Self, "a program the plugin starts": got.Child} {
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		for _, secret := range []string{"TOOLC_TOKEN", "TOOLC_STATE_KEY", "CI_DEPLOY_KEY"} {
			if v, ok := vars[secret]; ok {
				t.Errorf("%s has %s=%s", name, secret, v)
			}
		}
		for _, kv := range env {
			for _, secret := range []string{"the-bearer-token", "the-state-key", "the-ci-secret"} {
				if strings.Contains(kv, secret) {
					t.Errorf("%s has %s", name, kv)
				}
			}
		}
		for k, v := range map[string]string{
			"PATH": os.Getenv("PATH"), "HOME": "/home/toolc", "GOMEMLIMIT": "1GiB", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
			"MYAPP_API_KEY": "the-handler-key", "MYAPP_URL": "https://api.example", "TOOLC_CACHE": "/var/cache/toolc",
			"FROM_CONFIG": "set", "LANG": "en_GB.UTF-8", Handshake.MagicCookieKey: Handshake.MagicCookieValue,
		} {
			if vars[k] != v {
				t.Errorf("%s has %s=%q, want %q", name, k, vars[k], v)
			}
		}
	}
}

func TestChecksumAndAutoMTLS(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(bin, "toolbox"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Checksum, cfg.AutoMTLS = sum[:], true })
	if got := text(call(t, c, "say", `{"Message":"secure"}`)); got != "secure" {
		t.Errorf("got %q", got)
	}
}

func TestConcurrentCalls(t *testing.T) {
	c, _ := startToolbox(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf("m%d", i)
			res, err := c.Call(context.Background(), "say", msg, json.RawMessage(`{"Message":"`+msg+`"}`), nil)
			if err != nil || text(res) != msg {
				t.Errorf("call %d: %v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
}

func TestStartErrors(t *testing.T) {
	toolbox := filepath.Join(bin, "toolbox")
	for _, tc := range []struct {
		name string
		cfg  ClientConfig
		want string
	}{
		{"missing binary", ClientConfig{Path: filepath.Join(bin, "missing")}, "plugin binary not found"},
		{"bin true", ClientConfig{Path: "/bin/true"}, "not a toolc plugin"},
		{"a Go program", ClientConfig{Path: filepath.Join(bin, "notplugin")}, "not a toolc plugin"},
		{"another protocol", ClientConfig{Path: filepath.Join(bin, "raw"), Args: []string{"-protocol", "99"}}, "another protocol version"},
		{"checksum mismatch", ClientConfig{Path: toolbox, Checksum: make([]byte, 32)}, "checksum mismatch: binary has sha256 "},
		{"start timeout", ClientConfig{Path: filepath.Join(bin, "notplugin"), Args: []string{"hang"}, StartTimeout: 300 * time.Millisecond}, "did not start within the start timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Service = "svc"
			tc.cfg.Stderr = &testsync.Buffer{}
			begin := time.Now()
			c, err := Start(context.Background(), tc.cfg)
			if err == nil {
				c.Kill()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `service "svc"`) {
				t.Errorf("err = %v, want it to name the service and say %q", err, tc.want)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("Start took %v", d)
			}
		})
	}
}

func TestStartHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := Start(ctx, ClientConfig{Service: "svc", Path: filepath.Join(bin, "notplugin"), Args: []string{"hang"}, Stderr: &testsync.Buffer{}})
	if err == nil || time.Since(begin) > 2*time.Second {
		t.Fatalf("Start returned %v after %v, want an error within the context's 200ms", err, time.Since(begin))
	}
}

// hostHelperEnv makes the test binary a host that starts the plugin named
// by the variable, prints the plugin's pid and waits to be killed.
const hostHelperEnv = "TOOLC_PLUGINS_TEST_HOST"

func runHostHelper() {
	c, err := Start(context.Background(), ClientConfig{Service: "helper", Path: os.Getenv(hostHelperEnv)})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pid", c.Pid())
	time.Sleep(time.Minute)
	c.Kill()
}
