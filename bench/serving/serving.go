// Package serving compares the MCP servers of Go, toolc's among them, on
// one tool call, with one load generator for all of them (issue 27).
//
// Every server serves query_weather (package weather) from a process of its
// own: the peers from bench/cmd/mcppeer (a floor with no MCP library,
// mark3labs/mcp-go with its input validation, go-sdk, and toolc's packages
// with the handler in process), and `toolc serve` with the handler in a
// plugin. The load generator sends pre-built request bodies over
// keep-alive HTTP/1.1, one connection per client, each client calling in
// sequence, at 2025-11-25 (a session per client) and at 2026-07-28 (each
// call a request of its own); or over stdio, one client. Rounds rotate
// the servers, so that each round sees them all at nearly one moment of
// the machine's load, and each round records the load average and the
// servers' CPU time from /proc.
//
// TestServing runs a short version of the comparison (every server and
// revision, one short round) as part of go test; TOOLC_SERVING=1 runs the
// long one and prints the table of BENCHMARKS.md.
package serving

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolc/toolc/bench/serving/weather"
)

// Revisions are the MCP revisions compared: the last with sessions, and
// the first without.
var Revisions = []string{"2025-11-25", "2026-07-28"}

// CallArgs are the arguments of every call; Want is in every answer to it.
const (
	CallArgs = `{"city":"Berlin","days":2}`
	Want     = `"summary":"Berlin: mostly clear, high `
)

// clientCaps are the capabilities the clients declare: what go-sdk's
// client declares as it comes (roots, whose list may change), as real
// clients declare some. A server that serves a client of no capabilities
// on a faster path than one of some is measured on the one clients take.
const clientCaps = `{"roots":{"listChanged":true}}`

// meta2026 is the _meta that a 2026-07-28 request carries in place of a
// session's initialize.
const meta2026 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + clientCaps + `}`

// CallBody is the body of a tools/call of query_weather at rev with args.
func CallBody(rev, args string) []byte {
	meta := ""
	if rev >= "2026-07-28" {
		meta = `,"_meta":` + meta2026
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + weather.Name +
		`","arguments":` + args + meta + `}}`)
}

// Server is a running server under test.
type Server struct {
	Name string
	// URL is its MCP endpoint; "" for a stdio server.
	URL string
	cmd *exec.Cmd
	// stdio is the stdio server's session, after its initialize.
	stdin  io.WriteCloser
	stdout *bufio.Reader
	lastID int // the id of the last stdio call
	done   chan struct{}
}

var endpoint = regexp.MustCompile(`http://[0-9.:\[\]]+/mcp`)

// StartHTTP starts argv, a server that names its endpoint on its standard
// output or error, and waits for it to do so.
func StartHTTP(ctx context.Context, name string, argv []string, dir string) (*Server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); pw.Close(); close(s.done) }()
	found := make(chan string, 1)
	var said strings.Builder
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := endpoint.FindString(sc.Text()); m != "" {
				select {
				case found <- m:
				default:
				}
			} else if said.Len() < 4096 {
				said.WriteString(sc.Text() + "\n")
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case s.URL = <-found:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s exited before serving: %s", name, said.String())
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("%s: no endpoint: %w", name, ctx.Err())
	}
}

// StartStdio starts argv, a server on its standard input and output, and
// opens its session at rev.
func StartStdio(ctx context.Context, name string, argv []string, dir, rev string) (*Server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Name: name, cmd: cmd, stdin: in, stdout: bufio.NewReaderSize(out, 64<<10), done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev +
		`","capabilities":` + clientCaps + `,"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	errc := make(chan error, 1)
	go func() {
		if _, err := io.WriteString(in, init); err != nil {
			errc <- err
			return
		}
		_, err := s.readAnswer(`"id":0`)
		errc <- err
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("%s: initialize over stdio: %w", name, err)
	}
	return s, nil
}

// readAnswer reads lines until one holds want, and returns it.
func (s *Server) readAnswer(want string) ([]byte, error) {
	for {
		line, err := s.stdout.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, errors.New("answer longer than 64 KiB")
		}
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, []byte(want)) {
			return line, nil
		}
	}
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (s *Server) Stop() {
	if s.stdin != nil {
		s.stdin.Close()
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// client is one client of an HTTP server: its own connection, and its
// session at a legacy revision.
type client struct {
	hc      *http.Client
	url     string
	rev     string
	session string
	body    []byte
	buf     bytes.Buffer
}

func newClient(url, rev string) *client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &client{hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, url: url, rev: rev, body: CallBody(rev, CallArgs)}
}

// post POSTs body with the revision's headers, and reads the answer into
// c.buf.
func (c *client) post(ctx context.Context, body []byte, method string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Accept"] = []string{"application/json, text/event-stream"}
	h["Content-Type"] = []string{"application/json"}
	if c.rev >= "2026-07-28" || method != "initialize" {
		h["Mcp-Protocol-Version"] = []string{c.rev}
	}
	if c.rev >= "2026-07-28" {
		h["Mcp-Method"] = []string{method}
		if method == "tools/call" {
			h["Mcp-Name"] = []string{weather.Name}
		}
	}
	if c.session != "" {
		h["Mcp-Session-Id"] = []string{c.session}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	c.buf.Reset()
	_, err = c.buf.ReadFrom(resp.Body)
	return resp, err
}

// open starts the client's session at a legacy revision.
func (c *client) open(ctx context.Context) error {
	if c.rev >= "2026-07-28" {
		return nil
	}
	resp, err := c.post(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+c.rev+
		`","capabilities":`+clientCaps+`,"clientInfo":{"name":"bench","version":"1"}}}`), "initialize")
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("initialize: %s: %s", resp.Status, c.buf.String())
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	resp, err = c.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized")
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notifications/initialized: %s", resp.Status)
	}
	return nil
}

// close ends the client's session and its connection.
func (c *client) close() {
	if c.session != "" {
		if req, err := http.NewRequest(http.MethodDelete, c.url, nil); err == nil {
			req.Header.Set("Mcp-Session-Id", c.session)
			req.Header.Set("Mcp-Protocol-Version", c.rev)
			if resp, err := c.hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	c.hc.CloseIdleConnections()
}

// call makes one call and checks its answer.
func (c *client) call(ctx context.Context) error {
	resp, err := c.post(ctx, c.body, "tools/call")
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(c.buf.Bytes(), []byte(Want)) || bytes.Contains(c.buf.Bytes(), []byte(`"isError":true`)) {
		return fmt.Errorf("tools/call: %s: %.300s", resp.Status, c.buf.String())
	}
	return nil
}

// Sample is one round of one server.
type Sample struct {
	Calls  int
	Errors int
	// FirstError is the first failed call's error.
	FirstError error
	Wall       time.Duration
	// CPU is the server's CPU time over the round, Plugin the part of it
	// in its child processes (toolc serve's plugins).
	CPU, Plugin time.Duration
	// Load is the 1-minute load average at the round's start.
	Load float64
}

// PerSecond is the round's calls per second.
func (s Sample) PerSecond() float64 { return float64(s.Calls) / s.Wall.Seconds() }

// CPUPerCall is the server's CPU time per call, and PluginPerCall the part
// of it in its plugins.
func (s Sample) CPUPerCall() time.Duration    { return perCall(s.CPU, s.Calls) }
func (s Sample) PluginPerCall() time.Duration { return perCall(s.Plugin, s.Calls) }

func perCall(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

// RunHTTP has clients call srv at rev, each in sequence, for d, after
// opening their sessions (not timed), and measures the round.
func RunHTTP(ctx context.Context, srv *Server, rev string, clients int, d time.Duration) (Sample, error) {
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = newClient(srv.URL, rev)
		if err := cs[i].open(ctx); err != nil {
			return Sample{}, fmt.Errorf("%s at %s: %w", srv.Name, rev, err)
		}
		defer cs[i].close()
	}
	// A warm-up call each, so that every connection is open before the
	// clock starts.
	for _, c := range cs {
		if err := c.call(ctx); err != nil {
			return Sample{}, fmt.Errorf("%s at %s: %w", srv.Name, rev, err)
		}
	}
	var calls, errs atomic.Int64
	var first atomic.Pointer[error]
	s := Sample{Load: LoadAverage()}
	cpu0, plugin0 := TreeCPU(srv.Pid())
	start := time.Now()
	stop := start.Add(d)
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() {
			for time.Now().Before(stop) && ctx.Err() == nil {
				if err := c.call(ctx); err != nil {
					errs.Add(1)
					first.CompareAndSwap(nil, &err)
					continue
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	s.Wall = time.Since(start)
	cpu1, plugin1 := TreeCPU(srv.Pid())
	s.CPU, s.Plugin = cpu1-cpu0, plugin1-plugin0
	s.Calls, s.Errors = int(calls.Load()), int(errs.Load())
	if p := first.Load(); p != nil {
		s.FirstError = *p
	}
	return s, nil
}

// RunStdio has one client call srv, a stdio server, in sequence for d.
// Each call has an id of its own: a server may still hold the id of the
// call it has just answered. A call unanswered for 10 s ends the server.
func RunStdio(ctx context.Context, srv *Server, d time.Duration) (Sample, error) {
	body := CallBody(Revisions[0], CallArgs)
	const idField = `"id":1,`
	at := bytes.Index(body, []byte(idField))
	head, tail := body[:at+len(`"id":`)], append(slices.Clone(body[at+len(idField)-1:]), '\n')
	var line []byte
	call := func() error {
		srv.lastID++
		id := strconv.Itoa(srv.lastID)
		line = append(append(append(line[:0], head...), id...), tail...)
		stuck := time.AfterFunc(10*time.Second, func() { srv.cmd.Process.Kill() })
		defer stuck.Stop()
		if _, err := srv.stdin.Write(line); err != nil {
			return err
		}
		answer, err := srv.readAnswer(`"id":` + id + `,`)
		if err != nil {
			return err
		}
		if !bytes.Contains(answer, []byte(Want)) || bytes.Contains(answer, []byte(`"isError":true`)) {
			return fmt.Errorf("tools/call: %.300s", answer)
		}
		return nil
	}
	if err := call(); err != nil {
		return Sample{}, fmt.Errorf("%s over stdio: %w", srv.Name, err)
	}
	s := Sample{Load: LoadAverage()}
	cpu0, plugin0 := TreeCPU(srv.Pid())
	start := time.Now()
	for stop := start.Add(d); time.Now().Before(stop) && ctx.Err() == nil; {
		if err := call(); err != nil {
			return Sample{}, fmt.Errorf("%s over stdio, call %d: %w", srv.Name, srv.lastID, err)
		}
		s.Calls++
	}
	s.Wall = time.Since(start)
	cpu1, plugin1 := TreeCPU(srv.Pid())
	s.CPU, s.Plugin = cpu1-cpu0, plugin1-plugin0
	return s, nil
}

// LoadAverage is the machine's 1-minute load average; 0 if unknown.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// clockTick is the unit of /proc's CPU times (USER_HZ), 100 per second on
// Linux.
const clockTick = 10 * time.Millisecond

// TreeCPU is the CPU time, user and system, of process pid and of its
// descendants, and the descendants' share of it, from /proc; zero where
// /proc is not there. /proc counts in ticks of 10 ms, which the rounds of
// seconds make small.
func TreeCPU(pid int) (total, children time.Duration) {
	kids := map[int][]int{}
	cpu := map[int]time.Duration{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command, which is in parentheses and may
		// hold spaces: state ppid ... utime (14th field) stime (15th).
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		kids[ppid] = append(kids[ppid], p)
		cpu[p] = time.Duration(ut+st) * clockTick
	}
	var walk func(p int, child bool)
	walk = func(p int, child bool) {
		total += cpu[p]
		if child {
			children += cpu[p]
		}
		for _, k := range kids[p] {
			walk(k, true)
		}
	}
	walk(pid, false)
	return total, children
}
