package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolc/toolc/runtime"
)

// FuzzStdioFraming feeds arbitrary bytes, as lines, to an MCP session over
// NewStdioTransport with a real go-sdk server, between a valid initialize
// and a ping. Whatever the bytes, the session must live on to answer the
// ping, and every line the server writes must be one JSON-RPC 2.0 message
// or batch. The session is on 2025-03-26, which has batches, so that the
// batch paths run as well; the seeds hold what once ended a session.
func FuzzStdioFraming(f *testing.F) {
	for _, s := range []string{
		"this is not json",
		`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"} {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`[]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]\n[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]",
		`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"r","result":{}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n" + `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`{"id":5,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"ping","id":1.5}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0"}`,
		`"just a string"`,
		"\xff\xfe",
		"\r\n\r\n  \t\n",
		strings.Repeat("[", 10000),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := stdioSession(t, [][]byte{
			[]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`),
			[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
			data,
			[]byte(`{"jsonrpc":"2.0","id":"last","method":"ping"}`),
		}, `"last"`)
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			if !validRPCLine(line) {
				t.Errorf("the server wrote %q, which is no JSON-RPC 2.0 message", line)
			}
		}
	})
}

// TestStdioLongLine: a line over MaxStdioLine is answered and skipped,
// without buffering it whole, and the session goes on.
func TestStdioLongLine(t *testing.T) {
	long := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`), bytes.Repeat([]byte("x"), MaxStdioLine)...)
	long = append(long, `"}}`...)
	out := stdioSession(t, [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`),
		long,
		[]byte(`{"jsonrpc":"2.0","id":"last","method":"ping"}`),
	}, `"last"`)
	if !bytes.Contains(out, []byte(`"code":-32700,"message":"Parse error: a message is longer than`)) {
		t.Errorf("no parse error for the long line in:\n%s", out)
	}
}

// stdioSession writes lines to a server over NewStdioTransport and returns
// what it wrote up to its answer with the id want, alone or in a batch.
func stdioSession(t *testing.T, lines [][]byte, want string) []byte {
	t.Helper()
	srv := New(runtime.New(runtime.Options{}), Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, NewStdioTransport(inR, outW)) }()
	go func() {
		for _, l := range lines {
			if _, err := inW.Write(append(l, '\n')); err != nil {
				return
			}
		}
	}()
	var (
		mu  sync.Mutex
		got bytes.Buffer
	)
	written := func() string { mu.Lock(); defer mu.Unlock(); return got.String() }
	answered := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			mu.Lock()
			got.Write(sc.Bytes())
			got.WriteByte('\n')
			mu.Unlock()
			var m []struct {
				ID json.RawMessage `json:"id"`
			}
			line := sc.Bytes()
			if len(line) > 0 && line[0] != '[' {
				line = append(append([]byte{'['}, line...), ']') // one message
			}
			if json.Unmarshal(line, &m) == nil && slices.ContainsFunc(m, func(m struct {
				ID json.RawMessage `json:"id"`
			}) bool {
				return string(m.ID) == want
			}) {
				close(answered)
				break
			}
		}
		io.Copy(io.Discard, outR)
	}()
	select {
	case <-answered:
	case err := <-done:
		t.Fatalf("the session ended (%v) before answering %s; it wrote:\n%s", err, want, written())
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer to %s; the server wrote:\n%s", want, written())
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end at the end of its input")
	}
	outW.Close()
	return []byte(written())
}

// validRPCLine reports whether a line is one JSON-RPC 2.0 message, or a
// non-empty batch of them.
func validRPCLine(line []byte) bool {
	type msg struct {
		JSONRPC string `json:"jsonrpc"`
	}
	var one msg
	if json.Unmarshal(line, &one) == nil {
		return one.JSONRPC == "2.0"
	}
	var batch []msg
	if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
		return false
	}
	for _, m := range batch {
		if m.JSONRPC != "2.0" {
			return false
		}
	}
	return true
}

// TestStdioBatchWithNotification: a batch that holds a notification
// beside its calls is answered, calls and all. go-sdk alone counts the
// notification among the requests to answer and never sends the batch's
// answer.
func TestStdioBatchWithNotification(t *testing.T) {
	out := stdioSession(t, [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`),
		[]byte(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`),
		[]byte(`[{"jsonrpc":"2.0","method":"notifications/x"}]`),
	}, `4`)
	if !bytes.Contains(out, []byte(`[{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","id":4,"result":{}}]`)) {
		t.Errorf("no answer to the batch's calls in:\n%s", out)
	}
}
