// Command raw serves the plugin protocol with go-plugin and the generated
// code alone, without the SDK: the baseline of BenchmarkRawGoPlugin, and
// (with -protocol N) a plugin of an older protocol version, or of one the
// host does not speak. With -dump FILE it appends to FILE everything it
// receives: its arguments and environment at start, and each call's
// request as protobuf bytes and gRPC metadata, for tests of what crosses
// the process boundary; -tools names the tools it describes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
	"github.com/toolc/toolc/plugins/rpc"
)

type server struct {
	pb.UnimplementedPluginServer
	version int
	tools   []string
}

func (s server) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Tools: s.tools, ProtocolVersion: int32(s.version)}, nil
}

// Call answers with the arguments as text, no decoding, a block "input"
// when the host sent an Input (protocol version 3), and a block "caller"
// when it sent a Caller (version 4).
func (server) Call(req *pb.CallRequest, stream pb.Plugin_CallServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	wire, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	dump(fmt.Sprintf("call %d bytes: %s\nmetadata: %v\n", len(wire), wire, md))
	res := &pb.Result{Content: []*pb.Content{{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: string(req.ArgumentsJson)}}}}}
	if req.Input != nil {
		res.Content = append(res.Content, &pb.Content{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: "input"}}})
	}
	if req.Caller != nil {
		res.Content = append(res.Content, &pb.Content{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: "caller"}}})
	}
	return stream.Send(&pb.CallEvent{Event: &pb.CallEvent_Result{Result: res}})
}

var (
	dumpMu   sync.Mutex
	dumpFile *os.File
)

// dump appends s to the -dump file, if there is one.
func dump(s string) {
	dumpMu.Lock()
	defer dumpMu.Unlock()
	if dumpFile != nil {
		dumpFile.WriteString(s)
	}
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	version int
	tools   []string
}

func (p grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterPluginServer(s, server{version: p.version, tools: p.tools})
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	version := flag.Int("protocol", rpc.ProtocolVersion, "protocol version to serve")
	tools := flag.String("tools", "say", "comma-separated tools to describe")
	dumpTo := flag.String("dump", "", "append everything received to `FILE`")
	flag.Parse()
	if *dumpTo != "" {
		f, err := os.OpenFile(*dumpTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		dumpFile = f
		dump(fmt.Sprintf("args: %q\nenv: %q\n", os.Args, os.Environ()))
	}
	hs := rpc.Handshake
	hs.ProtocolVersion = uint(*version)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  hs,
		VersionedPlugins: map[int]plugin.PluginSet{*version: {"toolc": grpcPlugin{version: *version, tools: strings.Split(*tools, ",")}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
