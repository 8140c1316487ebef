package mcpserver_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// syncBuffer is standard output for a stdio session: go-sdk writes from
// its goroutines while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStdioAnswersBeforeEOF: a client that pipes its requests in and
// closes standard input (printf ... | toolc serve --stdio) gets an answer
// to every request it sent, however long the calls take, and then the
// session ends. go-sdk alone fails every write once its reader has seen
// the end of the input, so a call still running there was never answered.
func TestStdioAnswersBeforeEOF(t *testing.T) {
	cat, err := runtimetest.EnvelopeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	type none struct{}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"envelope": runtime.Local(
		plugins.Handle("ping", func(ctx context.Context, _ none) (*plugins.Result, error) {
			time.Sleep(300 * time.Millisecond) // still running when the input ends
			return plugins.Text("pong"), nil
		}),
		plugins.Handle("other", func(context.Context, none) (*plugins.Result, error) { return plugins.Text("other"), nil }),
		plugins.Handle("measure", func(context.Context, struct{ Text string }) (*plugins.Result, error) {
			return plugins.Text("measure"), nil
		}),
	)}); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"})
	in := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"envelope_ping","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"envelope_ping","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"envelope_ping","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	}, "\n") + "\n")
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, mcpserver.NewStdioTransport(in, &out)) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end after its input did; it wrote:\n%s", out.String())
	}
	got := out.String()
	for _, want := range []string{
		`"id":1,"result":{"capabilities"`,
		`"id":2,"result":{"content":[{"type":"text","text":"pong"}]`,
		`"id":3,"result":{"content":[{"type":"text","text":"pong"}]`,
		`"id":5,"result":{}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in what the server wrote:\n%s", want, got)
		}
	}
}
