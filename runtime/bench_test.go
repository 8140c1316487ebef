package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
	"github.com/toolc/toolc/runtime"
)

// benchText is the payload of the call benchmarks: 1 KiB of text, as in
// the plugins package's BenchmarkRawGoPlugin, so that the two compare.
var (
	benchText = strings.Repeat("x", 1024)
	benchArgs = json.RawMessage(`{"text":"` + benchText + `"}`)
)

// BenchmarkCallPlugin is runtime.Call through the faulty plugin's echo:
// validation with the default applied, dispatch over go-plugin, the SDK's
// decode and JSON result, and the check of the result against the
// response fields.
func BenchmarkCallPlugin(b *testing.B) {
	rt := newRuntime(b, runtime.Options{}, startFaulty(b))
	ctx := context.Background()
	for b.Loop() {
		res, err := rt.Call(ctx, "echo", benchArgs)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// echoHandler is the faulty plugin's echo, for in-process calls.
func echoHandler() plugins.Handler {
	return plugins.Handle("echo", func(_ context.Context, req struct {
		Text  string `json:"text"`
		Times *int   `json:"times"`
	}) (*plugins.Result, error) {
		if req.Times == nil {
			return plugins.Errorf("times is missing: the runtime did not apply its default"), nil
		}
		return plugins.JSON(map[string]any{"echo": strings.Repeat(req.Text, *req.Times), "times": *req.Times})
	})
}

// benchPayloads are the texts of the in-process benchmarks: the 1 KiB of
// the plugin benchmarks, and one byte, for the runtime's fixed cost apart
// from validating and checking 1 KiB each way.
var benchPayloads = []struct{ name, text string }{{"text=1KiB", benchText}, {"text=1B", "x"}}

// BenchmarkCallLocal is runtime.Call of the same echo in-process; its
// difference from BenchmarkHandlerDirect is the runtime's own cost.
func BenchmarkCallLocal(b *testing.B) {
	setup(b)
	cat, err := fixture.cat.Select("echo")
	if err != nil {
		b.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": runtime.Local(echoHandler())}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			args := json.RawMessage(`{"text":"` + p.text + `"}`)
			m := startThreadCPU()
			for b.Loop() {
				res, err := rt.Call(ctx, "echo", args)
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
			m.report(b)
		})
	}
}

// BenchmarkHandlerDirect calls the echo handler itself, with the
// arguments as the runtime passes them (the default applied): the
// baseline of BenchmarkCallLocal.
func BenchmarkHandlerDirect(b *testing.B) {
	h := echoHandler()
	ctx := context.Background()
	for _, p := range benchPayloads {
		b.Run(p.name, func(b *testing.B) {
			args := json.RawMessage(`{"text":"` + p.text + `","times":1}`)
			m := startThreadCPU()
			for b.Loop() {
				res, err := h.Call(ctx, args)
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
			m.report(b)
		})
	}
}

// threadCPU measures the CPU time of the benchmark's own thread, which
// runs the whole in-process call: unlike wall time, it does not grow when
// other processes take the CPU. (GC work on other threads is left out;
// GC assists, which the call pays for, are in.)
type threadCPU struct{ start time.Duration }

func startThreadCPU() *threadCPU {
	goruntime.LockOSThread()
	return &threadCPU{threadCPUTime()}
}

// report adds thread-cpu-ns/op.
func (m *threadCPU) report(b *testing.B) {
	d := threadCPUTime() - m.start
	goruntime.UnlockOSThread()
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "thread-cpu-ns/op")
}

// threadCPUTime is clock_gettime(CLOCK_THREAD_CPUTIME_ID).
func threadCPUTime() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// BenchmarkMCPHTTP is tools/call of the plugin's echo over Streamable
// HTTP, from 1, 8 and 64 go-sdk client sessions at once, each calling in
// a loop; calls/s is the throughput of all of them together.
func BenchmarkMCPHTTP(b *testing.B) {
	rt := newRuntime(b, runtime.Options{}, startFaulty(b))
	ts := serveHTTP(b, rt, runtime.HTTPOptions{})
	name := mcpName(b, "echo")
	for _, clients := range []int{1, 8, 64} {
		b.Run(map[int]string{1: "clients=1", 8: "clients=8", 64: "clients=64"}[clients], func(b *testing.B) {
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = connectMCP(b, ts.URL).session
			}
			params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(benchArgs)}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for _, s := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						res, err := s.CallTool(context.Background(), params)
						if err != nil || res.IsError {
							b.Error(res, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkPluginDispatch is the faulty plugin's echo through the
// dispatcher alone, with the arguments as validation leaves them: the SDK
// on both sides and go-plugin, without the runtime's checks. Its
// difference from BenchmarkCallPlugin is the runtime's cost.
func BenchmarkPluginDispatch(b *testing.B) {
	p := startFaulty(b)
	args := json.RawMessage(`{"text":"` + benchText + `","times":1}`)
	ctx := context.Background()
	for b.Loop() {
		res, err := p.Call(ctx, "echo", "bench", args, nil)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// cpuMeter measures the CPU time that the benchmark's process and a plugin
// process spend per operation. On a shared machine it varies much less
// than the wall time of a call, most of which is waiting for the other
// process to be scheduled.
type cpuMeter struct {
	pid          int
	self, plugin time.Duration
}

func startCPU(b *testing.B, pid int) *cpuMeter {
	m := &cpuMeter{pid: pid}
	m.self, m.plugin = selfCPU(b), processCPU(b, pid)
	return m
}

// report adds host-cpu-ns/op, plugin-cpu-ns/op and cpu-ns/op, their sum.
func (m *cpuMeter) report(b *testing.B) {
	self, plugin := selfCPU(b)-m.self, processCPU(b, m.pid)-m.plugin
	n := float64(b.N)
	b.ReportMetric(float64(self.Nanoseconds())/n, "host-cpu-ns/op")
	b.ReportMetric(float64(plugin.Nanoseconds())/n, "plugin-cpu-ns/op")
	b.ReportMetric(float64((self+plugin).Nanoseconds())/n, "cpu-ns/op")
}

func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU reads a process's user and system time from /proc, in clock
// ticks of 10ms: the benchmarks run for seconds, so that is fine enough.
func processCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after the
	// command name.
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkCallPluginCPU is BenchmarkCallPlugin with the CPU time of both
// processes.
func BenchmarkCallPluginCPU(b *testing.B) {
	p := startFaulty(b)
	rt := newRuntime(b, runtime.Options{}, p)
	ctx := context.Background()
	m := startCPU(b, p.Pid())
	for b.Loop() {
		res, err := rt.Call(ctx, "echo", benchArgs)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
	m.report(b)
}

// BenchmarkPluginDispatchCPU is BenchmarkPluginDispatch with the CPU time
// of both processes.
func BenchmarkPluginDispatchCPU(b *testing.B) {
	p := startFaulty(b)
	args := json.RawMessage(`{"text":"` + benchText + `","times":1}`)
	ctx := context.Background()
	m := startCPU(b, p.Pid())
	for b.Loop() {
		res, err := p.Call(ctx, "echo", "bench", args, nil)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
	m.report(b)
}

// rawPlugin is go-plugin's glue for the generated client alone.
type rawPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (rawPlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error { return nil }

func (rawPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pb.NewPluginClient(c), nil
}

// BenchmarkRawGoPluginCPU is the plugins package's BenchmarkRawGoPlugin,
// the same raw plugin (plugins/internal/testplugin/raw) called the same
// way, with the CPU time of both processes: the baseline of
// BenchmarkCallPluginCPU.
func BenchmarkRawGoPluginCPU(b *testing.B) {
	setup(b)
	raw := filepath.Join(fixture.dir, "raw")
	if _, err := os.Stat(raw); err != nil {
		build := exec.Command("go", "build", "-o", raw, "github.com/toolc/toolc/plugins/internal/testplugin/raw")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building the raw plugin: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(raw)
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  plugins.Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{plugins.ProtocolVersion: {"toolc": rawPlugin{}}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	defer pc.Kill()
	proto, err := pc.Client()
	if err != nil {
		b.Fatal(err)
	}
	disp, err := proto.Dispense("toolc")
	if err != nil {
		b.Fatal(err)
	}
	rpc := disp.(pb.PluginClient)
	ctx := context.Background()
	req := &pb.CallRequest{Tool: "say", ArgumentsJson: []byte(`{"Message":"` + benchText + `"}`), CallId: "bench"}
	m := startCPU(b, cmd.Process.Pid)
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
	m.report(b)
}
