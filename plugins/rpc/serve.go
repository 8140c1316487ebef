package rpc

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/toolc/toolc/internal/lazydeadline"
	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// Serve serves handlers to the host that launched this process, and
// returns when the host is done with it. It is meant to be all of a
// plugin's main. Two handlers for one tool are a programming error: Serve
// reports it and exits.
func Serve(handlers ...plugins.Handler) {
	srv, err := newServer(handlers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolc plugin:", err)
		os.Exit(1)
	}
	// A handler that reads stdin would steal from the host's own stdin
	// (go-plugin passes it on, and under MCP stdio it is the session).
	if null, err := os.Open(os.DevNull); err == nil {
		os.Stdin = null
	}
	srv.tracing = startTracing()
	// plugin.Serve returns once the host asked the plugin to stop: the
	// spans still buffered go out then.
	defer srv.tracing.stop()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: versionedPlugins(srv),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			// Stream workers reuse goroutines whose stacks have grown
			// already: with a goroutine per call, growing its stack
			// (runtime.morestack) took 11 % of a plugin's CPU time.
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageSize),
				grpc.NumStreamWorkers(uint32(goruntime.GOMAXPROCS(0))),
				grpc.StaticStreamWindowSize(flowWindow), grpc.StaticConnWindowSize(flowWindow))...)
		},
		// go-plugin's own debug lines would otherwise fill the host's
		// stderr on every start.
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr, JSONFormat: true}),
	})
}

// grpcPlugin is the go-plugin glue on both sides: the plugin registers
// server, the host gets the generated client.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server pb.PluginServer
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPluginServer(s, p.server)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pb.NewPluginClient(c), nil
}

// versionedPlugins offers every protocol version this SDK speaks, each
// served by a copy of srv that knows which one go-plugin settled on.
func versionedPlugins(srv *server) map[int]plugin.PluginSet {
	sets := map[int]plugin.PluginSet{}
	for v := minProtocolVersion; v <= ProtocolVersion; v++ {
		at := *srv
		at.version = v
		sets[v] = plugin.PluginSet{pluginName: &grpcPlugin{server: &at}}
	}
	return sets
}

type server struct {
	pb.UnimplementedPluginServer
	// version is the protocol version agreed with the host.
	version  int
	handlers map[string]plugins.Handler
	tools    []string
	// tracing is nil when the plugin does not export spans.
	tracing *pluginTracing
}

func newServer(handlers []plugins.Handler) (*server, error) {
	s := &server{version: ProtocolVersion, handlers: map[string]plugins.Handler{}}
	for _, h := range handlers {
		name := h.Tool()
		if _, dup := s.handlers[name]; dup {
			return nil, fmt.Errorf("two handlers for tool %q", name)
		}
		s.handlers[name] = h
		s.tools = append(s.tools, name)
	}
	sort.Strings(s.tools)
	return s, nil
}

func (s *server) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Tools: s.tools, ProtocolVersion: int32(s.version)}, nil
}

func (s *server) Call(req *pb.CallRequest, stream pb.Plugin_CallServer) error {
	h, ok := s.handlers[req.Tool]
	if !ok {
		return status.Errorf(codes.NotFound, "plugin has no handler for tool %q", req.Tool)
	}
	call := &callContext{send: stream.Send}
	ev, err := s.run(stream.Context(), h, req, call, MaxMessageSize)
	if err != nil {
		return err
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	call.done = true
	return stream.Send(ev)
}

// run runs one call of h, sending its events through call, and returns
// the event of its result: a result over bound (as sizeBound counts, then
// exactly) is replaced by a tool error that says so. It returns the
// context's error, as a gRPC status, if the host stopped waiting.
func (s *server) run(ctx context.Context, h plugins.Handler, req *pb.CallRequest, call *callContext, bound int) (*pb.CallEvent, error) {
	ctx, span := s.tracing.startCall(ctx, req.Tool, req.CallId, req.TraceContext)
	if req.TimeoutNanos > 0 {
		// A host of version 2 sends its deadline here, not to gRPC (a
		// host of version 1 sends it to gRPC, which puts it on ctx).
		// Most handlers never wait on their context, and then the lazy
		// deadline arms no timer.
		var release context.CancelFunc
		ctx, release = lazydeadline.WithDeadline(ctx, time.Now().Add(time.Duration(req.TimeoutNanos)))
		defer release()
	}
	// One value carries the call ID, the event stream and the input to
	// the handler, instead of three context.WithValue layers and a
	// closure per call.
	pc := plugins.Call{ID: req.CallId}
	// A host of version 1 cannot say whether it listens, so it gets all.
	if req.Events || s.version < 2 {
		pc.Events = call
	}
	if in := req.GetInput(); in != nil && s.version >= 3 {
		pc.Input = inputFromPB(in)
	}
	if who := req.GetCaller(); who != nil && s.version >= 4 {
		pc.Caller = &plugins.Caller{Subject: who.Subject, ClientID: who.ClientId, Scopes: who.Scopes}
	}

	res := plugins.Run(plugins.WithCall(ctx, pc), h, req.ArgumentsJson)
	endCall(span, res, ctx.Err())
	if err := ctx.Err(); err != nil {
		// The host cancelled or its deadline passed: it has stopped
		// waiting, and a result now (often just the handler passing on
		// ctx.Err()) would race its own context error.
		return nil, status.FromContextError(err).Err()
	}
	out, err := resultToPB(res, s.version)
	if err != nil {
		out, _ = resultToPB(plugins.Errorf("tool %s returned an unusable result: %v", req.Tool, err), s.version)
	}
	ev := &pb.CallEvent{Event: &pb.CallEvent_Result{Result: out}}
	if sizeBound(out) > MaxMessageSize && proto.Size(ev) > MaxMessageSize {
		n := proto.Size(ev)
		out, _ = resultToPB(plugins.Errorf("tool %s returned a result of %d bytes, over the limit of %d", req.Tool, n, MaxMessageSize), s.version)
		ev = &pb.CallEvent{Event: &pb.CallEvent_Result{Result: out}}
	} else if bound < MaxMessageSize && sizeBound(out) > bound {
		if n := proto.Size(ev); n > bound {
			return nil, &tooLargeError{size: n}
		}
	}
	return ev, nil
}

// tooLargeError is a result over the bound of the host's Calls stream.
type tooLargeError struct{ size int }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("result of %d bytes over the host's bound", e.size)
}

// callContext is the plugin side of one call's stream: it sends the
// handler's events to the host while the call runs.
type callContext struct {
	send func(*pb.CallEvent) error

	// A stream is not safe for concurrent sends, and a handler may report
	// from several goroutines, or after it returned; mu orders the sends
	// and done drops the late ones.
	mu   sync.Mutex
	done bool
}

func (c *callContext) Emit(e plugins.Event) {
	ev := eventToPB(e)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || ev == nil {
		return
	}
	// A failed send means the host has gone; the handler learns that from
	// its context, so the error is not the handler's to handle.
	_ = c.send(ev)
}
