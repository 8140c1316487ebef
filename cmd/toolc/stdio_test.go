package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeStdioMalformedLines drives toolc serve --stdio over raw pipes,
// as a careless client or an attacker would: after initialize, with a call
// in flight, lines that are not JSON-RPC messages. Each gets its JSON-RPC
// error, -32700 for what is not JSON and -32600 for what is no valid
// request, and the session goes on: the call in flight and the requests
// after the bad lines are answered. It once ended the session at the first
// bad line, losing the call.
func TestServeStdioMalformedLines(t *testing.T) {
	t.Parallel()
	cmd := toolcCmd(t, "serve", "--stdio", faultyPattern)
	stdin, stdout, stderr := startStdio(t, cmd)
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("toolc serve --stdio: %v\nstderr:\n%s", err, stderr.String())
		}
	}()
	type reply struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
		Method string          `json:"method"`
	}
	replies := make(chan reply, 100)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("toolc wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			if r.Method == "" { // not a notification
				replies <- r
			}
		}
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing %q: %v", line, err)
		}
	}
	// next returns the next reply, but the call's, which may come at any
	// point and is kept aside.
	var inFlight *reply
	next := func(what string) reply {
		t.Helper()
		for {
			select {
			case r, ok := <-replies:
				if !ok {
					t.Fatalf("toolc ended the session before %s\nstderr:\n%s", what, stderr.String())
				}
				if string(r.ID) == `"in-flight"` {
					inFlight = &r
					continue
				}
				return r
			case <-time.After(2 * time.Minute): // the first run builds the plugin
				t.Fatalf("no reply for %s\nstderr:\n%s", what, stderr.String())
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := next("initialize"); string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sleep := mcpToolName(t, faultyMCPTools(t), "sleep")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"in-flight","method":"tools/call","params":{"name":%q,"arguments":{"ms":1500}}}`, sleep))

	for _, tc := range []struct {
		line string
		id   string
		code int
	}{
		{`this is not json`, "null", -32700},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, "null", -32700},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"} {"jsonrpc":"2.0","id":4,"method":"tools/list"}`, "null", -32700},
		{`{"id":5,"method":"tools/list"}`, "5", -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, "null", -32600},
		{`[]`, "null", -32600},
		{`[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`, "null", -32600}, // no batches since 2025-06-18
		{`42`, "null", -32600},
		{"\x00\xff", "null", -32700},
	} {
		send(tc.line)
		r := next(fmt.Sprintf("%q", tc.line))
		if string(r.ID) != tc.id || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%q: got %+v (error %+v), want error %d with id %s", tc.line, r, r.Error, tc.code, tc.id)
		}
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if r := next("tools/list"); string(r.ID) != "7" || r.Error != nil || !strings.Contains(string(r.Result), sleep) {
		t.Errorf("tools/list after the bad lines: %+v", r)
	}
	deadline := time.After(time.Minute)
	for inFlight == nil {
		select {
		case r, ok := <-replies:
			if ok && string(r.ID) == `"in-flight"` {
				inFlight = &r
			} else if !ok {
				t.Fatalf("toolc ended the session with the call in flight\nstderr:\n%s", stderr.String())
			}
		case <-deadline:
			t.Fatalf("the call in flight was never answered\nstderr:\n%s", stderr.String())
		}
	}
	if inFlight.Error != nil || strings.Contains(string(inFlight.Result), `"isError":true`) {
		t.Errorf("the call in flight: %+v %s", inFlight.Error, inFlight.Result)
	}
}

// startStdio starts cmd, a toolc speaking MCP on stdio, and returns the
// pipes to its stdin and from its stdout, and its stderr as written so far.
// Closing stdin ends the session; the test closes it when it ends, in case
// it did not.
func startStdio(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, *lockedBuffer) {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout, stderr
}
