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

	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
	pluginrpc "github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// The plugin benchmarks call one of two tools of the faulty plugin with
// runtimetest.BenchArgs:
//
//   - say answers with the text as plain text: the same work as the bare
//     go-plugin baseline (1 KiB in, 1 KiB of text out), plus what the SDK
//     and the runtime add: validation, decoding into the request struct,
//     result conversion. It is the like-for-like comparison with
//     BenchmarkRawGoPluginCPU and the one the performance target names.
//   - echo answers with structured content and the text copy of it that
//     MCP asks for, which the runtime checks against the response fields:
//     more work than the baseline does, reported as the JSON variants.
const (
	textTool = "say"
	jsonTool = "echo"
)

// BenchmarkCallPlugin is runtime.Call of the faulty plugin's say:
// validation, dispatch over go-plugin, the SDK's decode and text result.
func BenchmarkCallPlugin(b *testing.B) { benchCallPlugin(b, textTool) }

// BenchmarkCallPluginJSON is runtime.Call of the faulty plugin's echo:
// validation with the default applied, dispatch over go-plugin, the SDK's
// decode and JSON result, and the check of the result against the
// response fields.
func BenchmarkCallPluginJSON(b *testing.B) { benchCallPlugin(b, jsonTool) }

func benchCallPlugin(b *testing.B, tool string) {
	rt := runtimetest.NewRuntime(b, runtime.Options{}, runtimetest.StartFaulty(b))
	for b.Loop() {
		callOK(b, rt, tool)
	}
}

func callOK(b *testing.B, rt *runtime.Runtime, tool string) {
	res, err := rt.Call(context.Background(), tool, runtimetest.BenchArgs)
	if err != nil || res.IsError || len(res.Content) == 0 || len(res.Content[0].Text) < len(runtimetest.BenchText) {
		b.Fatal(res, err)
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
var benchPayloads = []struct{ name, text string }{{"text=1KiB", runtimetest.BenchText}, {"text=1B", "x"}}

// BenchmarkCallLocal is runtime.Call of the same echo in-process; its
// difference from BenchmarkHandlerDirect is the runtime's own cost.
func BenchmarkCallLocal(b *testing.B) {
	runtimetest.Setup(b)
	cat, err := runtimetest.Setup(b).Catalog.Select("echo")
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
	rt := runtimetest.NewRuntime(b, runtime.Options{}, runtimetest.StartFaulty(b))
	ts := runtimetest.ServeHTTP(b, rt, httpapi.Options{})
	name := runtimetest.MCPName(b, "echo")
	for _, clients := range []int{1, 8, 64} {
		b.Run(map[int]string{1: "clients=1", 8: "clients=8", 64: "clients=64"}[clients], func(b *testing.B) {
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = runtimetest.ConnectMCP(b, ts.URL).Session
			}
			params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(runtimetest.BenchArgs)}
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

// BenchmarkPluginDispatch is the faulty plugin's say through the
// dispatcher alone, with the arguments as validation leaves them: the SDK
// on both sides and go-plugin, without the runtime's checks. Its
// difference from BenchmarkCallPlugin is the runtime's cost.
func BenchmarkPluginDispatch(b *testing.B) {
	p := runtimetest.StartFaulty(b)
	for b.Loop() {
		dispatchOK(b, p)
	}
}

func dispatchOK(b *testing.B, p *host.Plugin) {
	res, err := p.Call(context.Background(), textTool, "bench", runtimetest.BenchArgs, nil)
	if err != nil || res.IsError {
		b.Fatal(res, err)
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
	m.self, m.plugin = runtimetest.SelfCPU(b), processCPU(b, pid)
	return m
}

// report adds host-cpu-ns/op, plugin-cpu-ns/op and cpu-ns/op, their sum.
func (m *cpuMeter) report(b *testing.B) {
	self, plugin := runtimetest.SelfCPU(b)-m.self, processCPU(b, m.pid)-m.plugin
	n := float64(b.N)
	b.ReportMetric(float64(self.Nanoseconds())/n, "host-cpu-ns/op")
	b.ReportMetric(float64(plugin.Nanoseconds())/n, "plugin-cpu-ns/op")
	b.ReportMetric(float64((self+plugin).Nanoseconds())/n, "cpu-ns/op")
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
func BenchmarkCallPluginCPU(b *testing.B) { benchCallPluginCPU(b, textTool) }

// BenchmarkCallPluginJSONCPU is BenchmarkCallPluginJSON with the CPU time
// of both processes.
func BenchmarkCallPluginJSONCPU(b *testing.B) { benchCallPluginCPU(b, jsonTool) }

func benchCallPluginCPU(b *testing.B, tool string) {
	p := runtimetest.StartFaulty(b)
	rt := runtimetest.NewRuntime(b, runtime.Options{}, p)
	m := startCPU(b, p.Pid())
	for b.Loop() {
		callOK(b, rt, tool)
	}
	m.report(b)
}

// BenchmarkPluginDispatchCPU is BenchmarkPluginDispatch with the CPU time
// of both processes.
func BenchmarkPluginDispatchCPU(b *testing.B) {
	p := runtimetest.StartFaulty(b)
	m := startCPU(b, p.Pid())
	for b.Loop() {
		dispatchOK(b, p)
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
// BenchmarkCallPluginCPU. It sends runtimetest.BenchArgs, the bytes the runtime
// benchmarks send, and gets them back as text.
func BenchmarkRawGoPluginCPU(b *testing.B) {
	rpc, pid := startRaw(b)
	m := startCPU(b, pid)
	for b.Loop() {
		rawCall(b, rpc)
	}
	m.report(b)
}

// startRaw starts the raw plugin with go-plugin and the generated client
// alone, and returns the client and the plugin's pid.
func startRaw(b *testing.B) (pb.PluginClient, int) {
	runtimetest.Setup(b)
	raw := filepath.Join(runtimetest.Setup(b).Dir, "raw")
	if _, err := os.Stat(raw); err != nil {
		build := exec.Command("go", "build", "-o", raw, "github.com/toolc/toolc/plugins/internal/testplugin/raw")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building the raw plugin: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(raw)
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{pluginrpc.ProtocolVersion: {"toolc": rawPlugin{}}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	b.Cleanup(pc.Kill)
	proto, err := pc.Client()
	if err != nil {
		b.Fatal(err)
	}
	disp, err := proto.Dispense("toolc")
	if err != nil {
		b.Fatal(err)
	}
	return disp.(pb.PluginClient), cmd.Process.Pid
}

var rawRequest = &pb.CallRequest{Tool: "say", ArgumentsJson: runtimetest.BenchArgs, CallId: "bench"}

// rawCall is one call of the raw plugin, read to the end of its stream.
func rawCall(b *testing.B, rpc pb.PluginClient) {
	stream, err := rpc.Call(context.Background(), rawRequest)
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

// BenchmarkCallPluginVsRaw runs runtime.Call of say (result=text) or echo
// (result=json), or say through the dispatcher alone (dispatch=text: the
// SDK without the runtime), and the raw go-plugin call of
// BenchmarkRawGoPluginCPU in alternating blocks of pairBlock calls, in one
// process, and reports each
// one's wall and CPU time per call and their ratios (x-raw-wall,
// x-raw-cpu). On a machine that others share, load comes and goes within
// seconds; blocks of a few milliseconds put both sides of the ratio under
// the same load, which separate benchmarks run seconds apart do not. One
// op is one pair of blocks. The host's garbage collector may run during
// either block, whichever side allocated the garbage.
func BenchmarkCallPluginVsRaw(b *testing.B) {
	rpc, rawPid := startRaw(b)
	p := runtimetest.StartFaulty(b)
	rt := runtimetest.NewRuntime(b, runtime.Options{}, p)
	for _, tc := range []struct {
		name string
		call func(*testing.B)
	}{
		{"result=text", func(b *testing.B) { callOK(b, rt, textTool) }},
		{"result=json", func(b *testing.B) { callOK(b, rt, jsonTool) }},
		{"dispatch=text", func(b *testing.B) { dispatchOK(b, p) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var raw, call blockMeter
			for b.Loop() {
				raw.run(b, rawPid, func() { rawCall(b, rpc) })
				call.run(b, p.Pid(), func() { tc.call(b) })
			}
			raw.report(b, "raw-")
			call.report(b, "")
			b.ReportMetric(float64(call.wall)/float64(raw.wall), "x-raw-wall")
			b.ReportMetric(float64(call.host+call.plugin)/float64(raw.host+raw.plugin), "x-raw-cpu")
		})
	}
}

// pairBlock is the number of calls in one block of
// BenchmarkCallPluginVsRaw: 2 to 3 ms, short against the bursts of load.
const pairBlock = 10

// blockMeter adds up the wall time and the CPU time of both processes
// over blocks of calls.
type blockMeter struct {
	calls              int
	wall, host, plugin time.Duration
}

func (m *blockMeter) run(b *testing.B, pid int, call func()) {
	// The readings of the other process come outside the window of this
	// one's, so that neither counts the cost of reading /proc.
	p0 := threadsCPU(b, pid)
	h0 := runtimetest.SelfCPU(b)
	t0 := time.Now()
	for range pairBlock {
		call()
	}
	m.wall += time.Since(t0)
	m.host += runtimetest.SelfCPU(b) - h0
	m.plugin += threadsCPU(b, pid) - p0
	m.calls += pairBlock
}

func (m *blockMeter) report(b *testing.B, prefix string) {
	n := float64(m.calls)
	b.ReportMetric(float64(m.wall.Nanoseconds())/n, prefix+"ns/call")
	b.ReportMetric(float64(m.host.Nanoseconds())/n, prefix+"host-cpu-ns/call")
	b.ReportMetric(float64(m.plugin.Nanoseconds())/n, prefix+"plugin-cpu-ns/call")
	b.ReportMetric(float64((m.host+m.plugin).Nanoseconds())/n, prefix+"cpu-ns/call")
}

// threadsCPU is the CPU time of a process, summed over its threads from
// /proc/PID/task/TID/schedstat, in nanoseconds rather than the 10 ms ticks
// of /proc/PID/stat, which a block of calls is too short for.
func threadsCPU(b *testing.B, pid int) time.Duration {
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
		n, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			b.Skip("unreadable schedstat: ", err)
		}
		sum += time.Duration(n)
	}
	return sum
}
