package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// ClientConfig says how to launch the handler plugin of one service.
type ClientConfig struct {
	// Service names the service; it prefixes the plugin's stderr lines and
	// the errors about it.
	Service string
	// Path is the plugin binary; a bare name is looked up in PATH.
	Path string
	Args []string
	// PassEnv names the variables of the host's environment that the
	// plugin gets beyond the few that every plugin gets (see env.go): by
	// name, or by a prefix and "*" (MYAPP_*). $TOOLC_TOKEN and
	// $TOOLC_STATE_KEY are never passed.
	PassEnv []string
	// Env is added to the plugin's environment, and wins over what it gets
	// from the host's.
	Env []string
	// StartTimeout bounds the launch, handshake and Describe; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Stderr receives the plugin's stderr and stdout, one line at a time,
	// each prefixed with "[Service] "; nil means os.Stderr. Plugin output
	// never goes to the host's stdout, which may be an MCP stdio session.
	Stderr io.Writer
	// Checksum, when set, is the SHA-256 the binary must have (go-plugin's
	// SecureConfig), as recorded at build time.
	Checksum []byte
	// AutoMTLS has go-plugin secure the connection with mutual TLS, using
	// certificates made for this one launch.
	AutoMTLS bool
	// HealthInterval is how often the host's supervisor (host.Plugin)
	// checks that the plugin answers, and HealthTimeout how long it waits
	// for the answer before it kills and restarts the plugin. Zero means
	// the defaults (10s, 5s); a negative interval turns the check off.
	HealthInterval, HealthTimeout time.Duration
}

// DefaultStartTimeout bounds a plugin's start when ClientConfig leaves
// StartTimeout zero.
const DefaultStartTimeout = 10 * time.Second

// Client is a running plugin process of one service.
type Client struct {
	service string
	pc      *plugin.Client
	cmd     *exec.Cmd
	rpc     pb.PluginClient
	tools   []string
	// version is the protocol version agreed with the plugin.
	version int
	// run is the process's runner; nil where go-plugin's own runs it.
	run *procRunner
	// release removes a private copy of a pinned binary, which Windows
	// keeps while it runs; nil if there is none.
	release func()
	// recv is the receive bound of the last limit a call had.
	recv atomic.Pointer[recvOption]
	// mux is the Calls stream (protocol version 5), opened by the first
	// call; muxMu guards it.
	muxMu sync.Mutex
	mux   *mux
	// noMux is set once the plugin turned out to serve no Calls.
	noMux atomic.Bool
}

// Start launches the plugin binary, performs the handshake and asks it
// which tools it handles. It fails with an error naming the service and the
// binary when the binary is missing, is not a toolc plugin, speaks another
// protocol version, does not match Checksum, or does not start in time;
// the process is gone by then. Cancelling ctx abandons the start; the
// plugin's later life does not depend on ctx.
func Start(ctx context.Context, cfg ClientConfig) (*Client, error) {
	c, err := start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("plugins: start handler of service %q (%s): %w", cfg.Service, cfg.Path, err)
	}
	return c, nil
}

func start(ctx context.Context, cfg ClientConfig) (*Client, error) {
	path, err := exec.LookPath(cfg.Path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("plugin binary not found: %w", fs.ErrNotExist)
	} else if err != nil {
		return nil, fmt.Errorf("plugin binary not usable: %w", err)
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	// The plugin's output arrives on three streams (below); sharing one
	// lock, their writers interleave whole lines only.
	var mu sync.Mutex
	prefix := "[" + cfg.Service + "] "

	// Not the host's environment, which holds toolc's secrets: the part
	// of it a plugin needs, what PassEnv names, and Env (see env.go).
	// go-plugin would add the host's whole environment; SkipHostEnv
	// below stops it.
	env := pluginEnv(os.Environ(), cfg.PassEnv, cfg.Env)

	// A pinned binary runs from the file whose checksum was taken, not
	// from its name again (see pin.go).
	exe := path
	var pinnedBin *pinned
	if cfg.Checksum != nil {
		if pinnedBin, err = pin(path, cfg.Checksum); err != nil {
			return nil, err
		}
		exe = pinnedBin.exe
		if testHookPinned != nil {
			testHookPinned(path)
		}
	}
	cmd := exec.Command(exe, cfg.Args...)
	cmd.Args[0] = path // the plugin's os.Args[0] is its name, not /proc/self/fd/N
	cmd.Env = env

	pcfg := &plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: hostPlugins(),
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Managed:          true,
		StartTimeout:     timeout,
		AutoMTLS:         cfg.AutoMTLS,
		// The plugin's stderr file descriptor (panics, the log package)...
		Stderr: &lineWriter{mu: &mu, out: stderr, prefix: prefix},
		// ...and os.Stderr and os.Stdout inside the plugin, which go-plugin
		// replaces with pipes streamed over gRPC.
		SyncStderr: &lineWriter{mu: &mu, out: stderr, prefix: prefix},
		SyncStdout: &lineWriter{mu: &mu, out: stderr, prefix: prefix},
		// go-plugin's own logging duplicates the errors Start returns.
		Logger: hclog.NewNullLogger(),
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
			grpc.WithStaticStreamWindowSize(flowWindow), grpc.WithStaticConnWindowSize(flowWindow)},
	}
	var run *procRunner
	if haveRunner {
		// The output on fd 1 after the handshake is logged like stderr.
		pcfg.RunnerFunc = newRunner(cmd, &lineWriter{mu: &mu, out: stderr, prefix: prefix}, &run)
	} else {
		pcfg.Cmd = cmd
	}
	pc := plugin.NewClient(pcfg)

	type started struct {
		c   *Client
		err error
	}
	ch := make(chan started, 1)
	go func() {
		c, err := handshake(pc, cmd, cfg, timeout, &run)
		if err != nil {
			pc.Kill()
		}
		if pinnedBin != nil {
			// The process runs from the pinned file now, or never will.
			pinnedBin.release()
			if c != nil {
				c.release = pinnedBin.release
			}
		}
		ch <- started{c, err}
	}()
	select {
	case s := <-ch:
		return s.c, s.err
	case <-ctx.Done():
		// go-plugin's start cannot be interrupted; let it finish (it is
		// bounded by timeout) and stop whatever it started.
		go func() {
			if s := <-ch; s.err == nil {
				s.c.Kill()
			}
		}()
		return nil, ctx.Err()
	}
}

func handshake(pc *plugin.Client, cmd *exec.Cmd, cfg ClientConfig, timeout time.Duration, made **procRunner) (*Client, error) {
	proto, err := pc.Client()
	// The runner, if go-plugin got as far as making one, was made during
	// pc.Client, on this goroutine.
	run := *made
	if err != nil {
		return nil, explainStartError(err, run)
	}
	raw, err := proto.Dispense(pluginName)
	if err != nil {
		return nil, err
	}
	rpc := raw.(pb.PluginClient)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	desc, err := rpc.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	version := pc.NegotiatedVersion()
	if int(desc.ProtocolVersion) != version {
		return nil, fmt.Errorf("plugin reports protocol version %d, but agreed on %d at the handshake", desc.ProtocolVersion, version)
	}
	return &Client{service: cfg.Service, pc: pc, cmd: cmd, rpc: rpc, tools: desc.Tools, version: version, run: run}, nil
}

// hostPlugins offers go-plugin every protocol version the host speaks; the
// client side is the same for all of them.
func hostPlugins() map[int]plugin.PluginSet {
	sets := map[int]plugin.PluginSet{}
	for v := minProtocolVersion; v <= ProtocolVersion; v++ {
		sets[v] = plugin.PluginSet{pluginName: &grpcPlugin{}}
	}
	return sets
}

// explainStartError says what go-plugin's start errors mean for toolc, in
// one line: go-plugin's own texts run to many lines of generic advice.
func explainStartError(err error, run *procRunner) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	exitedEarly := strings.Contains(msg, "plugin exited before we could connect") || msg == "Unrecognized remote plugin message: "
	if exitedEarly && run != nil {
		// Say how it died, and its last words: a panic in its main is a
		// broken plugin, not something that is not a plugin at all.
		status, words := run.exitStatus(2*time.Second), run.lastWords(time.Second)
		switch {
		case status == "exit status 0" && words == "":
			return errors.New("not a toolc plugin (its main must call Serve): it exited without the go-plugin handshake")
		case status == "":
			status = "exited"
		}
		if words == "" {
			return fmt.Errorf("the plugin ended during its start (%s), before the go-plugin handshake, and wrote nothing to stderr; a toolc plugin's main must call Serve", status)
		}
		return fmt.Errorf("the plugin ended during its start (%s), before the go-plugin handshake: %s", status, words)
	}
	switch {
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("plugin speaks another protocol version than this host (%d to %d); rebuild it against this toolc: %s", minProtocolVersion, ProtocolVersion, msg)
	case strings.Contains(msg, "plugin exited before we could connect"),
		msg == "Unrecognized remote plugin message: ":
		return errors.New("not a toolc plugin (its main must call Serve): it exited without the go-plugin handshake")
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		return fmt.Errorf("not a toolc plugin (its main must call Serve): it printed %q instead of the go-plugin handshake",
			strings.TrimPrefix(msg, "Unrecognized remote plugin message: "))
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return errors.New("plugin did not start within the start timeout")
	}
	return errors.New(msg)
}

// Tools lists the tools the plugin handles, as it described them at start.
func (c *Client) Tools() []string { return c.tools }

// Pid is the plugin's process id.
func (c *Client) Pid() int {
	if c.run != nil {
		return c.run.Pid()
	}
	return c.cmd.Process.Pid
}

// Exited reports whether the plugin process has ended.
func (c *Client) Exited() bool { return c.pc.Exited() }

// ExitStatus says how the plugin process ended ("exit status 3", "signal:
// killed"), once it has; "" before, or where it is not known.
func (c *Client) ExitStatus() string {
	if c.run == nil {
		return ""
	}
	return c.run.exitStatus(0)
}

// Ping asks the plugin to describe itself, as a health check: a plugin
// that is stopped, or too busy to answer its gRPC server, fails it when
// ctx ends.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.rpc.Describe(ctx, &pb.DescribeRequest{})
	return err
}

// KillNow kills the plugin and its process group at once, without the
// graceful stop that Kill tries first (which a wedged plugin would make
// wait), and returns once it is gone.
func (c *Client) KillNow() {
	if c.run != nil {
		c.run.killGroup()
	} else if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
	c.pc.Kill()
	c.endMux()
	c.released()
}

// endMux closes the Calls stream, if there is one.
func (c *Client) endMux() {
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	if c.mux != nil {
		c.mux.end()
	}
}

// Kill stops the plugin: gracefully if it answers, else by force. It
// returns once the process is gone, and may be called more than once.
func (c *Client) Kill() {
	c.pc.Kill()
	c.endMux()
	c.released()
}

func (c *Client) released() {
	if c.release != nil {
		c.release()
	}
}

// Call runs tool in the plugin. Progress and log events reach onEvent (if
// non-nil) in the order the handler sent them, all before Call returns.
// ctx's cancellation and deadline reach the handler's context, and the
// Input that WithInput put on it reaches the handler's asks (a plugin of
// protocol version 3; an older one never asks).
//
// A tool error (including a handler's error or panic) is a Result with
// IsError set and a nil error. A non-nil error means the call did not
// complete: ctx ended (the error wraps ctx.Err()), or the plugin died or
// broke the protocol (then Exited tells whether it is gone).
func (c *Client) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(plugins.Event)) (*plugins.Result, error) {
	req := &pb.CallRequest{Tool: tool, ArgumentsJson: args, CallId: callID, Events: onEvent != nil}
	if in := plugins.InputOf(ctx); in != nil && c.version >= 3 {
		req.Input = inputToPB(in)
	}
	if who, ok := plugins.CallerOf(ctx); ok && c.version >= 4 {
		req.Caller = callerToPB(who)
	}
	// A traced call's trace context travels in the request to a plugin of
	// version 7, and in a Call RPC's metadata to an older one (see
	// trace.go); every other call of a plugin of version 5 or later takes
	// the Calls stream.
	tracing := traced(ctx)
	if tracing && c.version >= 7 {
		req.TraceContext = traceContextOf(ctx)
	}
	if !tracing || c.version >= 7 {
		if m := c.muxFor(plugins.ResultLimit(ctx)); m != nil {
			return c.callMux(ctx, m, req, onEvent)
		}
	}
	return c.callRPC(ctx, req, onEvent)
}

// callRPC is Call over a Call RPC of its own.
func (c *Client) callRPC(ctx context.Context, req *pb.CallRequest, onEvent func(plugins.Event)) (*plugins.Result, error) {
	tool := req.Tool
	// The runtime's bound on the result bounds every message of the call
	// as gRPC receives it: a larger one is refused from its header, before
	// a byte of it is read or held.
	limit := plugins.ResultLimit(ctx)
	rpcCtx := ctx
	if d, ok := ctx.Deadline(); ok && c.version >= 2 {
		// The deadline goes in the request, and gRPC gets ctx without
		// it: with a deadline, gRPC sends it as a header and the plugin's
		// gRPC server arms a timer for it on every call, where the plugin
		// arms one only if its handler waits on its context. ctx's end,
		// its deadline included, still cancels the RPC here.
		req.TimeoutNanos = max(int64(time.Until(d)), 1)
		rpcCtx = withoutDeadline{ctx}
	}
	stream, err := c.rpc.Call(withTraceContext(ctx, rpcCtx), req, c.recvLimit(limit)...)
	if err != nil {
		return nil, c.callError(ctx, tool, limit, err)
	}
	// The stream is read to its end, even past the result: that ends it
	// the way gRPC expects, where returning early would leave it open
	// until ctx ends, or need a context of our own to cancel it, which
	// gRPC then resets with a frame of its own to the plugin. Only a
	// panicking onEvent leaves early; the rest is read in the background.
	finished := false
	var gate eventGate
	defer func() {
		if !finished {
			go drain(stream)
		}
	}()
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			finished = true
			gate.report(onEvent, c.service)
			return nil, fmt.Errorf("plugins: service %q: tool %s: the plugin ended the call without a result", c.service, tool)
		}
		if err != nil {
			finished = true
			gate.report(onEvent, c.service)
			return nil, c.callError(ctx, tool, limit, err)
		}
		switch e := ev.Event.(type) {
		case *pb.CallEvent_Result:
			drain(stream) // the status follows the result at once
			finished = true
			gate.report(onEvent, c.service)
			return resultFromPB(e.Result), nil
		case *pb.CallEvent_Progress:
			if onEvent != nil && gate.allow() {
				p := e.Progress
				onEvent(plugins.Event{Progress: &plugins.ProgressEvent{Progress: p.Progress, Total: p.Total, Message: cut(p.Message, maxEventMessage)}})
			}
		case *pb.CallEvent_Log:
			if onEvent != nil && gate.allow() {
				l := e.Log
				onEvent(plugins.Event{Log: &plugins.LogEvent{Level: cut(l.Level, maxEventName), Logger: cut(l.Logger, maxEventName), Message: cut(l.Message, maxEventMessage)}})
			}
		}
	}
}

// withoutDeadline is its Context, cancelled with it (and by its deadline),
// but reporting no deadline. Wrapping, rather than a context.WithCancel
// tied to it by context.AfterFunc, costs the call one small allocation:
// the context package still finds the cancelCtx underneath, so gRPC's own
// WithCancel on it needs no goroutine.
type withoutDeadline struct{ context.Context }

func (withoutDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }

// drain reads a call's stream to its end.
func drain(stream pb.Plugin_CallClient) {
	for {
		if _, err := stream.Recv(); err != nil {
			return
		}
	}
}

func (c *Client) callError(ctx context.Context, tool string, limit int, err error) error {
	// Report the end of the caller's context as its own error, so that
	// errors.Is(err, context.DeadlineExceeded) works, even when the plugin
	// noticed the deadline first.
	if ctx.Err() != nil {
		return fmt.Errorf("plugins: service %q: tool %s: %w", c.service, tool, context.Cause(ctx))
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded:
		return fmt.Errorf("plugins: service %q: tool %s: %w", c.service, tool, context.DeadlineExceeded)
	case codes.Canceled:
		return fmt.Errorf("plugins: service %q: tool %s: %w", c.service, tool, context.Canceled)
	}
	if st := status.Convert(err); st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "received message") {
		// gRPC's own words: "grpc: received message larger than max (N
		// vs. M)".
		tooLarge := &plugins.ResultTooLargeError{Limit: limit}
		if limit <= 0 {
			tooLarge.Limit = MaxMessageSize
		}
		if _, after, ok := strings.Cut(st.Message(), "larger than max ("); ok {
			fmt.Sscanf(after, "%d", &tooLarge.Size)
		}
		return fmt.Errorf("plugins: service %q: tool %s: %w", c.service, tool, tooLarge)
	}
	if st := status.Convert(err); st.Code() == codes.Internal && strings.Contains(st.Message(), "invalid UTF-8") {
		// A plugin built against an SDK that sent text as it got it.
		return fmt.Errorf("plugins: service %q: tool %s: the handler returned text that is not valid UTF-8, which its toolc SDK could not send; rebuild it against this toolc, which replaces such bytes with U+FFFD", c.service, tool)
	}
	if status.Code(err) == codes.Unavailable {
		// The connection broke, most likely because the process died. Give
		// go-plugin a moment to notice, so that Exited is accurate for a
		// caller deciding whether to restart.
		for deadline := time.Now().Add(time.Second); !c.pc.Exited() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return fmt.Errorf("plugins: service %q: tool %s: plugin call failed (plugin exited: %t): %w", c.service, tool, c.pc.Exited(), err)
}

// CleanupClients kills every plugin process that Start launched and that is
// still running. A host calls it on its way out (go-plugin's Managed).
func CleanupClients() { plugin.CleanupClients() }
