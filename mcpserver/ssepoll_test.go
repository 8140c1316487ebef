package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// resumes records the GETs that resume a stream (Last-Event-ID) and the
// retry fields the server sent.
type resumes struct {
	next http.RoundTripper
	mu   sync.Mutex
	gets []string // the Last-Event-ID of each resuming GET
}

func (r *resumes) RoundTrip(req *http.Request) (*http.Response, error) {
	if id := req.Header.Get("Last-Event-ID"); req.Method == http.MethodGet && id != "" {
		r.mu.Lock()
		r.gets = append(r.gets, id)
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func (r *resumes) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.gets)
}

// TestSSEPolling: with SSEPollAfter, the stream of a 2025-11-25 call that
// runs longer is closed mid-call, the go-sdk client resumes it with GET and
// Last-Event-ID, and gets the call's progress and result there, once. A
// call that finishes in time, a 2025-03-26 client (which cannot resume a
// stream) and a 2026-07-28 client (whose revision has no resumable
// streams) keep their stream.
func TestSSEPolling(t *testing.T) {
	rt := runtime.New(runtime.Options{})
	var handlers []plugins.Handler
	for _, h := range (&askers{}).handlers() {
		if h.Tool() != "plain" {
			handlers = append(handlers, h)
		}
	}
	handlers = append(handlers, plugins.Handle("plain", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
		plugins.Progress(ctx, 1, 3, "started")
		time.Sleep(1500 * time.Millisecond)
		plugins.Progress(ctx, 2, 3, "still going")
		return plugins.Text("Hello, Ada!"), nil
	}))
	if _, err := rt.Swap(askCatalog(t), map[string]runtime.Dispatcher{"ask": runtime.Local(handlers...)}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{}),
		httpapi.Options{MCP: mcpserver.HTTPOptions{SSEPollAfter: time.Second, SSEPollRetry: 10 * time.Millisecond}}))
	t.Cleanup(ts.Close)
	// The poll closes a stream after a second: plain runs for 1.5, past
	// it, and greet (one elicitation) finishes well within it even in a
	// -race run on a loaded machine, where 100 ms was too short for it.

	for _, tc := range []struct {
		revision, tool string
		resumed        int
	}{
		{"2025-11-25", "plain", 1},
		{"2025-11-25", "greet", 0},
		{"2025-03-26", "plain", 0},
		{"2026-07-28", "plain", 0},
	} {
		t.Run(tc.revision+"/"+tc.tool, func(t *testing.T) {
			rec := &resumes{next: http.DefaultTransport}
			var seen int
			var mu sync.Mutex
			client := mcp.NewClient(&mcp.Implementation{Name: "polled", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					seen++
					mu.Unlock()
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: rec}},
				&mcp.ClientSessionOptions{ProtocolVersion: tc.revision})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			params := &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}}
			params.SetProgressToken("p")
			res, err := s.CallTool(ctx, params)
			if err != nil || mcpText(res) != "Hello, Ada!" {
				t.Fatalf("call = %v, %v", res, err)
			}
			if n := rec.count(); n != tc.resumed {
				t.Errorf("the client resumed the stream %d times (%v), want %d", n, rec.gets, tc.resumed)
			}
			// go-sdk's client hands notifications to their handler on
			// their own, so the last may land just after the result.
			for deadline := time.Now().Add(2 * time.Second); tc.tool == "plain"; time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				n := seen
				mu.Unlock()
				if n == 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("the client saw %d progress notifications, want 2, one on each side of the close", n)
					break
				}
			}
		})
	}

	// The official TypeScript SDK's client resumes the stream too. Its
	// node and package come from scripts/test, as for cmd/toolc's
	// real-client tests.
	t.Run("typescript-sdk", func(t *testing.T) {
		node, sdk := os.Getenv("TOOLC_NODE"), os.Getenv("TOOLC_TS_SDK")
		if node == "" || sdk == "" {
			if os.Getenv("TOOLC_REQUIRE_NODE") != "" {
				t.Fatal("TOOLC_REQUIRE_NODE is set, but TOOLC_NODE or TOOLC_TS_SDK is not")
			}
			t.Skip("needs TOOLC_NODE and TOOLC_TS_SDK, which scripts/test sets")
		}
		script, _ := filepath.Abs("testdata/ssepoll/tsresume.mjs")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, node, script, sdk, ts.URL+"/mcp", "plain").Output()
		if err != nil {
			t.Fatalf("tsresume.mjs: %v; output %s", err, out)
		}
		var got struct {
			Revision, Text string
			Resumed        []string
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("tsresume.mjs printed %q: %v", out, err)
		}
		if got.Revision != "2025-11-25" || got.Text != "Hello, Ada!" || len(got.Resumed) != 1 {
			t.Errorf("the TypeScript client at %s got %q and resumed %v, want Hello, Ada! after one resumption", got.Revision, got.Text, got.Resumed)
		}
	})
}
