package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScaleOut runs three toolc serve replicas behind haproxy, round robin,
// and shows that the 2026-07-28 path keeps no state in a process: calls
// spread over all three, and when one replica is killed in the middle of a
// load run, no call fails that the client could not retry.
//
// It needs haproxy (Debian's package): TOOLC_HAPROXY names the binary.
// scripts/test installs it and sets TOOLC_HAPROXY when TOOLC_SCALEOUT=1;
// without it the test is skipped. TOOLC_SCALEOUT_SECONDS sets the load
// run's length (default 3).
func TestScaleOut(t *testing.T) {
	haproxy := os.Getenv("TOOLC_HAPROXY")
	if haproxy == "" {
		t.Skip("needs haproxy: set TOOLC_HAPROXY to its binary (scripts/test does with TOOLC_SCALEOUT=1)")
	}
	t.Parallel()
	replicas := make([]*exec.Cmd, 3)
	addrs := make([]string, 3)
	for i := range replicas {
		replicas[i], addrs[i] = startServe(t)
	}
	url := haproxyFront(t, haproxy, addrs)

	// Clients at 2026-07-28, each call a request of its own; served records
	// which replica answered.
	var served sync.Map
	wire := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			if by := resp.Header.Get("X-Served-By"); by != "" {
				n, _ := served.LoadOrStore(by, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		}
		return resp, err
	})
	connect := func() *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "scaleout", Version: "1"}, nil)
		s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: wire}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	echo := mcpToolName(t, faultyMCPTools(t), "echo")
	call := func(s *mcp.ClientSession) error {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "hi"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", resultText(res))
		}
		return err
	}

	// A legacy client's session lives in one replica: the balancer sticks
	// it there by its Mcp-Session-Id, as README's configuration does.
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "scaleout-legacy", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := call(legacy); err != nil {
			t.Fatalf("legacy session call %d through the balancer: %v", i, err)
		}
	}
	legacy.Close()

	seconds := 3
	if s := os.Getenv("TOOLC_SCALEOUT_SECONDS"); s != "" {
		fmt.Sscan(s, &seconds)
	}
	var calls, retried, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		s := connect()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				calls.Add(1)
				if err := call(s); err != nil {
					// A 2026-07-28 call holds no state: the client may send
					// it again, and one retry must do.
					retried.Add(1)
					if err := call(s); err != nil {
						failed.Add(1)
						firstFailure.CompareAndSwap(nil, err.Error())
					}
				}
			}
		}()
	}
	time.Sleep(time.Duration(seconds) * time.Second / 3)
	before := map[string]int64{}
	served.Range(func(k, v any) bool { before[k.(string)] = v.(*atomic.Int64).Load(); return true })
	replicas[1].Process.Kill() // no goodbye: a crash
	time.Sleep(time.Duration(seconds) * time.Second * 2 / 3)
	close(stop)
	wg.Wait()

	after := map[string]int64{}
	served.Range(func(k, v any) bool { after[k.(string)] = v.(*atomic.Int64).Load(); return true })
	t.Logf("%d calls, %d retried, %d failed; answered by replica before the kill %v, in all %v", calls.Load(), retried.Load(), failed.Load(), before, after)
	for _, r := range []string{"r0", "r1", "r2"} {
		if before[r] == 0 {
			t.Errorf("replica %s answered nothing before the kill: round robin over %v", r, before)
		}
	}
	if after["r1"] > before["r1"]+8 {
		t.Errorf("the killed replica r1 answered %d calls after the kill", after["r1"]-before["r1"])
	}
	if after["r0"] == before["r0"] || after["r2"] == before["r2"] {
		t.Errorf("the surviving replicas stopped answering: before %v, after %v", before, after)
	}
	if failed.Load() > 0 {
		t.Errorf("%d calls failed twice in a row; the first: %v", failed.Load(), firstFailure.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startServe starts toolc serve --http on the faulty service, and returns
// it and the address it serves on.
func startServe(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	cmd, url, _ := startServeHTTP(t, faultyPattern)
	return cmd, strings.TrimPrefix(url, "http://")
}

// haproxyFront starts haproxy in front of three toolc serve replicas at
// addrs, in the configuration that README's "Scaling out" gives (round
// robin, sticky legacy sessions, the health check on /healthz, retries on
// another replica), and returns its /mcp URL. The X-Served-By header of
// each response names the replica that answered: r0, r1 or r2.
func haproxyFront(t *testing.T, haproxy string, addrs []string) string {
	t.Helper()
	front := freePort(t)
	cfg := fmt.Sprintf(`global
	maxconn 1000
defaults
	mode http
	timeout connect 1s
	timeout client 30s
	timeout server 30s
	retries 3
	option redispatch
	retry-on conn-failure empty-response response-timeout
frontend mcp
	bind 127.0.0.1:%d
	default_backend toolc
backend toolc
	balance roundrobin
	option httpchk
	http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host localhost
	http-response set-header X-Served-By %%[srv_name]
	stick-table type string len 64 size 100k expire 1h
	stick store-response res.hdr(Mcp-Session-Id)
	stick match req.hdr(Mcp-Session-Id)
	server r0 %s check inter 200ms fall 1 rise 2
	server r1 %s check inter 200ms fall 1 rise 2
	server r2 %s check inter 200ms fall 1 rise 2
`, front, addrs[0], addrs[1], addrs[2])
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	lb := exec.Command(haproxy, "-db", "-f", path)
	lbOut := &lockedBuffer{}
	lb.Stdout, lb.Stderr = lbOut, lbOut
	if err := lb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lb.Process.Kill()
		lb.Wait()
		if t.Failed() {
			t.Logf("haproxy:\n%s", lbOut)
		}
	})
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", front))
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", front)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}
