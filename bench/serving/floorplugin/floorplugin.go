// Package floorplugin is the plugin hop of the serving comparison at its
// least: query_weather (bench/serving/weather) behind one unary gRPC
// method, served and dialled with hashicorp/go-plugin as its examples do,
// with no toolc on either side. The request and the answer are the tool's
// JSON in a wrappers.BytesValue, so that neither side has generated code
// or a codec of its own to pay for.
//
// The floor server of bench/cmd/mcppeer, with -plugin, calls its tool
// through it: what that costs over the floor in process is what any Go
// server pays for a handler in a go-plugin process, the floor under
// `toolc serve`'s hop.
package floorplugin

import (
	"context"
	"encoding/json"
	"os/exec"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/toolc/toolc/bench/serving/weather"
)

// handshake is the floor plugin's own: it is no toolc plugin.
var handshake = plugin.HandshakeConfig{ProtocolVersion: 1, MagicCookieKey: "TOOLC_FLOOR_PLUGIN", MagicCookieValue: "weather"}

// method is the one RPC: BytesValue in (the arguments), BytesValue out
// (the forecast).
const method = "/floor.Weather/Call"

// Answer is the plugin's side of a call: the arguments, with the
// contract's defaults, decoded with encoding/json, and the forecast
// encoded with it.
func Answer(args []byte) ([]byte, error) {
	in := weather.Request{Days: 3, Unit: "celsius"}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return json.Marshal(weather.Answer(in))
}

// Serve serves the plugin on the process's standard streams, as
// go-plugin's plugins do; it returns when the host ends the plugin.
func Serve() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake,
		Plugins:         plugin.PluginSet{"weather": weatherPlugin{}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}

// Client is the host's side: the running plugin and its connection.
type Client struct {
	pc   *plugin.Client
	conn *grpc.ClientConn
}

// Start runs the plugin binary at path.
func Start(path string) (*Client, error) {
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		Plugins:          plugin.PluginSet{"weather": weatherPlugin{}},
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	proto, err := pc.Client()
	if err != nil {
		pc.Kill()
		return nil, err
	}
	conn, err := proto.Dispense("weather")
	if err != nil {
		pc.Kill()
		return nil, err
	}
	return &Client{pc: pc, conn: conn.(*grpc.ClientConn)}, nil
}

// Call sends the arguments and returns the forecast.
func (c *Client) Call(ctx context.Context, args []byte) ([]byte, error) {
	out := new(wrapperspb.BytesValue)
	if err := c.conn.Invoke(ctx, method, wrapperspb.Bytes(args), out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// Kill ends the plugin.
func (c *Client) Kill() { c.pc.Kill() }

type weatherPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (weatherPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&service, nil)
	return nil
}

// GRPCClient hands the host the connection itself: Call is one Invoke.
func (weatherPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}

// service is what protoc-gen-go-grpc would write for the one method.
var service = grpc.ServiceDesc{
	ServiceName: "floor.Weather",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Call",
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			if interceptor == nil {
				return call(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: method}, func(ctx context.Context, req any) (any, error) {
				return call(ctx, req.(*wrapperspb.BytesValue))
			})
		},
	}},
}

func call(_ context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	out, err := Answer(in.Value)
	if err != nil {
		return nil, err
	}
	return wrapperspb.Bytes(out), nil
}
