package rpc

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

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
	rpc, _ := dialRaw(b, filepath.Join(bin, "raw"), ProtocolVersion)
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
