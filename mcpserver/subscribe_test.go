package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/runtime"
)

// TestSubscriptionsStayBounded: go-sdk keeps every URI a subscribe
// accepts, even after the session ends, and the URIs under a template or a
// skill's root are countless, so subscriptions to them grew the server
// without bound. They are accepted and not kept (no reload tells them),
// while a resource's own URI is kept and told of an edit.
func TestSubscriptionsStayBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a bound on a hang, not a measure
	defer cancel()
	updated := make(chan string, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	connectTo := func(url string) *mcp.ClientSession {
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// 2,048 URIs of 8,000 bytes under a skill's root: 16 MiB kept on the
	// old code after the session closed. (The skill's files, as a
	// template's URIs, match any path; a skill's root costs nothing to
	// match, so the test is quick.)
	skills, _ := serveSkills(t)
	const n, size = 2048, 8000
	before := liveHeap()
	s := connectTo(skills)
	for i := range n {
		uri := fmt.Sprintf("skill://pdf-processing/%0*d", size-len("skill://pdf-processing/"), i)
		if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe to a skill's file: %v", err)
		}
	}
	s.Close()
	grew := liveHeap() - before
	t.Logf("the heap grew %d KiB", grew>>10)
	if grew > n*size/4 {
		t.Errorf("after %d subscriptions of %d bytes and the session's end, the heap grew %d KiB; want it to keep none of them", n, size, grew>>10)
	}

	url, dir, rt, cat := serveDocs(t)
	s = connectTo(url)
	defer s.Close()
	for _, tc := range []struct {
		uri  string
		code int64
	}{
		{"docs://pages/intro", 0},
		{"docs://readme", 0},
		{"docs://nothing", jsonrpc.CodeInvalidParams},
		{"skill://pdf-processing/SKILL.md", jsonrpc.CodeInvalidParams},
	} {
		if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: tc.uri}); rpcCode(err) != tc.code || (err != nil) != (tc.code != 0) {
			t.Errorf("subscribe to %s = %v; want code %d", tc.uri, err, tc.code)
		}
	}
	// A resource's own URI is kept, and told of an edit of its file.
	if err := os.WriteFile(filepath.Join(dir, "docs", "README.md"), []byte("# Docs, v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"docs": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != "docs://readme" {
			t.Errorf("notifications/resources/updated of %s; want docs://readme", uri)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated after an edit of a subscribed resource's file")
	}
}

// TestListenSubscriptions: a 2026-07-28 subscriptions/listen agrees to
// each URI it can tell of once, however often it is named, and to no URI
// that only a template matches; one the server does not serve is
// "Resource not found".
func TestListenSubscriptions(t *testing.T) {
	url, _, _, _ := serveDocs(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a hang, not a measure
	defer cancel()
	many := []any{}
	for range 1000 {
		many = append(many, "docs://readme", "docs://pages/intro")
	}
	ack := firstOfListen(t, ctx, url, many)
	got, _ := ack["params"].(map[string]any)["notifications"].(map[string]any)["resourceSubscriptions"]
	if want := []any{"docs://readme"}; !reflect.DeepEqual(got, want) {
		t.Errorf("acknowledged resourceSubscriptions %v; want %v (in %v)", got, want, ack)
	}
	cancel()

	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := firstOfListen(t, ctx, url, []any{"docs://readme", "docs://nothing"})
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(jsonrpc.CodeInvalidParams) {
		t.Errorf("listen to a URI the server does not serve: %v; want -32602", m)
	}
}

// firstOfListen opens a 2026-07-28 subscriptions/listen for the resource
// URIs and returns the first message of its answer, decoded.
func firstOfListen(t *testing.T, ctx context.Context, url string, uris []any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
		"params": map[string]any{"_meta": json.RawMessage(meta2026), "notifications": map[string]any{"resourceSubscriptions": uris}}})
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", bytes.NewReader(body))
	req.Header = header2026("subscriptions/listen", "")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			line = "data: " + line
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("listen: %v in %q", err, d)
			}
			return m
		}
	}
	t.Fatalf("listen: %d with no message (%v)", resp.StatusCode, sc.Err())
	return nil
}

// TestLongURIs: a URI over maxURI is refused with -32602 that says why,
// before a template is matched against it (at about 2 µs a byte, a 4 MiB
// URI held a core for 17 s); one of maxURI bytes is served.
func TestLongURIs(t *testing.T) {
	url, _, _, _ := serveDocs(t)
	page := func(n int) string { return "docs://pages/" + strings.Repeat("a", n-len("docs://pages/")) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a hang, not a measure
	defer cancel()
	s := connect(t, url, "2025-11-25", nil)
	for _, tc := range []struct {
		name string
		do   func(uri string) error
	}{
		{"resources/read 2026-07-28", func(uri string) error {
			a := rpc2026(t, url, "resources/read", map[string]any{"uri": uri})
			if a.Error != nil {
				return &jsonrpc.Error{Code: int64(a.Error.Code), Message: a.Error.Message}
			}
			if a.status != 200 {
				return fmt.Errorf("HTTP %d: %.300s", a.status, a.raw)
			}
			return nil
		}},
		{"resources/read 2025-11-25", func(uri string) error {
			_, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			return err
		}},
		{"resources/subscribe", func(uri string) error { return s.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}) }},
		{"subscriptions/listen", func(uri string) error {
			m := firstOfListen(t, ctx, url, []any{"docs://readme", uri})
			if e, _ := m["error"].(map[string]any); e != nil {
				code, _ := e["code"].(float64)
				msg, _ := e["message"].(string)
				return &jsonrpc.Error{Code: int64(code), Message: msg}
			}
			return nil
		}},
	} {
		if err := tc.do(page(maxURI)); err != nil {
			t.Errorf("%s of a URI of %d bytes: %v", tc.name, maxURI, err)
		}
		// The largest a 2026-07-28 read can send: the URI is its
		// Mcp-Name header too, within net/http's 1 MiB of headers.
		for _, n := range []int{maxURI + 1, 512 << 10} {
			err := tc.do(page(n))
			if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), fmt.Sprintf("is %d bytes, over the %d", n, maxURI)) {
				t.Errorf("%s of a URI of %d bytes = %.300v; want -32602 that gives the bound", tc.name, n, err)
			}
		}
	}
}
