// Command raw serves the plugin protocol with go-plugin and the generated
// code alone, without the SDK: the baseline of BenchmarkRawGoPlugin, and
// (with -protocol N) a plugin of an older protocol version, or of one the
// host does not speak.
package main

import (
	"context"
	"flag"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
	"github.com/toolc/toolc/plugins/rpc"
)

type server struct {
	pb.UnimplementedPluginServer
	version int
}

func (s server) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Tools: []string{"say"}, ProtocolVersion: int32(s.version)}, nil
}

// Call answers with the arguments as text, no decoding, and a second
// block "input" when the host sent an Input (protocol version 3).
func (server) Call(req *pb.CallRequest, stream pb.Plugin_CallServer) error {
	res := &pb.Result{Content: []*pb.Content{{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: string(req.ArgumentsJson)}}}}}
	if req.Input != nil {
		res.Content = append(res.Content, &pb.Content{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: "input"}}})
	}
	return stream.Send(&pb.CallEvent{Event: &pb.CallEvent_Result{Result: res}})
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	version int
}

func (p grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPluginServer(s, server{version: p.version})
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	version := flag.Int("protocol", rpc.ProtocolVersion, "protocol version to serve")
	flag.Parse()
	hs := rpc.Handshake
	hs.ProtocolVersion = uint(*version)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  hs,
		VersionedPlugins: map[int]plugin.PluginSet{*version: {"toolc": grpcPlugin{version: *version}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
