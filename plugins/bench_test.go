package plugins

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// benchArgs is the payload of both benchmarks: a 1 KiB message, answered
// with the same text.
var benchArgs = json.RawMessage(`{"Message":"` + strings.Repeat("x", 1024) + `"}`)

// BenchmarkClientCall is one call through the SDK on both sides: Client.Call,
// the typed handler's decode, a text result.
func BenchmarkClientCall(b *testing.B) {
	c, _ := startToolbox(b)
	ctx := context.Background()
	for b.Loop() {
		res, err := c.Call(ctx, "say", "bench", benchArgs, nil)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkRawGoPlugin is the baseline: the generated gRPC client against a
// plugin that answers with the generated server alone, over go-plugin.
func BenchmarkRawGoPlugin(b *testing.B) {
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {pluginName: &grpcPlugin{}}},
		Cmd:              exec.Command(filepath.Join(bin, "raw")),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	defer pc.Kill()
	proto, err := pc.Client()
	if err != nil {
		b.Fatal(err)
	}
	raw, err := proto.Dispense(pluginName)
	if err != nil {
		b.Fatal(err)
	}
	rpc := raw.(pb.PluginClient)
	ctx := context.Background()
	req := &pb.CallRequest{Tool: "say", ArgumentsJson: benchArgs, CallId: "bench"}
	for b.Loop() {
		stream, err := rpc.Call(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			b.Fatal(err)
		}
		if _, err := stream.Recv(); err != io.EOF {
			b.Fatal(err)
		}
	}
}
