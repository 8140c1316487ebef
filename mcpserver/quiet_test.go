package mcpserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/testsync"
)

const undeliveredWarning = "calling notifications/tools/list_changed: rejected by transport: undelivered message: stream not connected or already closed"

// TestQuietUndelivered: go-sdk's warning about a notification no stream
// carried is said once, in toolc's words with go-sdk's as its error, and
// after that only at Debug; every other line passes as it was, and the
// loggers WithAttrs and WithGroup make share the once.
func TestQuietUndelivered(t *testing.T) {
	for _, tc := range []struct {
		level     slog.Level
		warn, dbg int
	}{{slog.LevelWarn, 1, 0}, {slog.LevelDebug, 1, 2}} {
		var b strings.Builder
		logger := slog.New(newQuietUndelivered(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: tc.level})))
		logger.Warn(undeliveredWarning)
		logger.With("k", "v").Warn(undeliveredWarning)
		logger.WithGroup("g").Warn(undeliveredWarning)
		logger.Warn("calling notifications/tools/list_changed: session is closed")
		logger.Warn("keepalive ping failed; tolerating below threshold: undelivered message")
		out := b.String()
		if n := strings.Count(out, "could not reach a session that keeps no stream open"); n != 1 {
			t.Errorf("level %v: the explanation %d times, want once:\n%s", tc.level, n, out)
		}
		if n := strings.Count(out, "level=WARN"); n != tc.warn+2 {
			t.Errorf("level %v: %d warnings, want %d (the explanation and the two other lines):\n%s", tc.level, n, tc.warn+2, out)
		}
		if n := strings.Count(out, "level=DEBUG"); n != tc.dbg {
			t.Errorf("level %v: %d debug lines, want %d:\n%s", tc.level, n, tc.dbg, out)
		}
		if !strings.Contains(out, `error="`+undeliveredWarning+`"`) {
			t.Errorf("the explanation does not carry go-sdk's words:\n%s", out)
		}
	}
}

// TestUndeliveredSaidOnce: three legacy sessions that keep no GET stream
// open, and three reloads that change the tools, make go-sdk warn nine
// times that list_changed went undelivered; the server's log says so
// once, and the rest at Debug.
func TestUndeliveredSaidOnce(t *testing.T) {
	log := &testsync.Buffer{}
	rt := testRuntime(t, &ran{})
	srv := New(rt, Options{Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)

	for i := range 3 {
		init := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`, i)
		resp := postRaw(t, ts.URL, init, nil)
		id := resp.Header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("initialize gave no session: %d", resp.StatusCode)
		}
		postRaw(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {id}, "Mcp-Protocol-Version": {"2025-11-25"}})
	}
	for i := range 3 {
		cat := testCatalog()
		cat.Services[0].Tools[1].Description = fmt.Sprintf("Answer, reload %d", i)
		cat.Seal()
		if _, err := rt.Swap(cat, testDispatchers(&ran{})); err != nil {
			t.Fatal(err)
		}
		testsync.WaitFor(t, 5*time.Second, "the reload's notifications", func() bool {
			return strings.Count(log.String(), "list_changed") >= 3*(i+1)
		})
	}
	out := log.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "could not reach a session that keeps no stream open") {
		t.Errorf("%d warnings, want the one explanation:\n%s", n, out)
	}
	if n := strings.Count(out, "level=DEBUG msg=\"calling notifications/tools/list_changed"); n != 8 {
		t.Errorf("%d of go-sdk's lines at debug level, want the other 8:\n%s", n, out)
	}
}

// postRaw POSTs body to url's /mcp and returns the response, its body
// read.
func postRaw(t *testing.T, url, body string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp
}
