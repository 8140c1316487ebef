package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/plugins"
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

// BenchmarkHop is the cost of the process boundary alone, both sides: the
// SDK's call of say (1 KiB each way) over the Calls stream (protocol
// version 5), and the same call over a Call RPC of its own (the path of
// versions 1 to 4, which a call without a result limit still takes), in
// alternating blocks of 10 calls so that both see the same load. It
// reports the CPU time of the host (this process) and of the plugin (from
// /proc) per call of each.
func BenchmarkHop(b *testing.B) {
	c, _ := startToolbox(b)
	limited := plugins.WithResultLimit(context.Background(), 4<<20)
	var stream, unary hopMeter
	for b.Loop() {
		stream.run(b, c, limited)
		unary.run(b, c, context.Background())
	}
	stream.report(b, "stream-")
	unary.report(b, "rpc-")
	b.ReportMetric(float64(stream.host+stream.plugin)/float64(unary.host+unary.plugin), "x-rpc-cpu")
}

type hopMeter struct {
	calls              int
	wall, host, plugin time.Duration
}

func (m *hopMeter) run(b *testing.B, c *Client, ctx context.Context) {
	p0 := taskCPU(b, c.Pid())
	h0 := selfCPU(b)
	t0 := time.Now()
	for range 10 {
		if res, err := c.Call(ctx, "say", "bench", benchArgs, nil); err != nil || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
	m.wall += time.Since(t0)
	m.host += selfCPU(b) - h0
	m.plugin += taskCPU(b, c.Pid()) - p0
	m.calls += 10
}

func (m *hopMeter) report(b *testing.B, prefix string) {
	n := float64(m.calls)
	b.ReportMetric(float64(m.wall.Nanoseconds())/n, prefix+"ns/call")
	b.ReportMetric(float64(m.host.Nanoseconds())/n, prefix+"host-cpu-ns/call")
	b.ReportMetric(float64(m.plugin.Nanoseconds())/n, prefix+"plugin-cpu-ns/call")
	b.ReportMetric(float64((m.host+m.plugin).Nanoseconds())/n, prefix+"cpu-ns/call")
}

func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// taskCPU is a process's CPU time, summed over its threads' schedstat,
// in nanoseconds (/proc/PID/stat counts in ticks of 10 ms).
func taskCPU(b *testing.B, pid int) time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	var sum time.Duration
	for _, t := range tasks {
		stat, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has exited
		}
		ns, _, _ := strings.Cut(string(stat), " ")
		n, _ := strconv.ParseInt(ns, 10, 64)
		sum += time.Duration(n)
	}
	return sum
}
