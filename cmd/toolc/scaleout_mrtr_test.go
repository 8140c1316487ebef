package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScaleOutMRTR runs three toolc serve replicas of examples/conformance
// behind haproxy, round robin, and has a 2026-07-28 client finish calls
// whose handlers ask in one and in two rounds: every round is a request of
// its own, so its requestState, sealed by one replica, is opened by
// another, which works only because the replicas share the key. Replicas
// each with a key of their own refuse one another's states, which shows
// what the shared key is for. Needs haproxy, as TestScaleOut does.
func TestScaleOutMRTR(t *testing.T) {
	haproxy := os.Getenv("TOOLC_HAPROXY")
	if haproxy == "" {
		t.Skip("needs haproxy: set TOOLC_HAPROXY to its binary (scripts/test does with TOOLC_SCALEOUT=1)")
	}
	t.Parallel()
	key := filepath.Join(t.TempDir(), "state.key")
	if err := os.WriteFile(key, []byte("a key shared by the three replicas, 32+ bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One plugin cache for the six replicas: the handler is built once.
	cache := t.TempDir()
	shared := balance(t, haproxy, cache, "--state-key-file", key)
	apart := balance(t, haproxy, cache)

	for _, tc := range []struct {
		tool, want string
		rounds     int
	}{
		{"test_input_required_result_elicitation", "Hello, Ada!", 1},
		{"test_input_required_result_multi_round", "Ada likes blue", 2},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			var mu sync.Mutex
			var by []string // the replica that served each tools/call round
			s := mrtrClient(t, shared, func(r *http.Request, resp *http.Response) {
				if strings.Contains(r.Header.Get("Mcp-Method"), "tools/call") {
					mu.Lock()
					by = append(by, resp.Header.Get("X-Served-By"))
					mu.Unlock()
				}
			})
			for i := range 6 {
				res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
				if err != nil || res.IsError || resultText(res) != tc.want {
					t.Fatalf("call %d through the balancer = %v, %v; want %q", i, res, err, tc.want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(by) != 6*(tc.rounds+1) {
				t.Fatalf("%d tools/call requests, want %d", len(by), 6*(tc.rounds+1))
			}
			moved := 0
			for i := 1; i < len(by); i++ {
				if by[i] != by[i-1] {
					moved++
				}
			}
			if moved == 0 {
				t.Errorf("every round reached replica %s: round robin did not spread them", by[0])
			}
		})
	}

	s := mrtrClient(t, apart, nil)
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_input_required_result_elicitation", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "not issued by this server") {
		t.Errorf("replicas with keys of their own: %v; want the next replica to refuse the state", err)
	}
}

// balance starts three replicas of toolc serve ./examples/conformance with
// args and haproxy in front of them (haproxyFront), and returns the
// balancer's /mcp.
func balance(t *testing.T, haproxy, cache string, args ...string) string {
	t.Helper()
	addrs := make([]string, 3)
	for i := range addrs {
		cmd := toolcCmd(t, append(append([]string{"serve", "--http", "127.0.0.1:0"}, args...), "./examples/conformance")...)
		cmd.Env = append(cmd.Env, "TOOLC_CACHE="+cache, "TOOLC_STATE_KEY=")
		url, _ := startServeCmd(t, cmd)
		addrs[i] = strings.TrimPrefix(url, "http://")
	}
	return haproxyFront(t, haproxy, addrs)
}

// mrtrClient connects a go-sdk client at 2026-07-28 that answers every
// elicitation (the name Ada, the color blue); seen, if set, sees each
// request with its response.
func mrtrClient(t *testing.T, url string, seen func(*http.Request, *http.Response)) *mcp.ClientSession {
	t.Helper()
	wire := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && seen != nil {
			seen(r, resp)
		}
		return resp, err
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-mrtr", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if strings.Contains(req.Params.Message, "color") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "blue"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: wire}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
