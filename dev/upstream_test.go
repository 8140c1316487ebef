package dev_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/dev"
	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/upstream"
)

// serverEnv, set in the environment of a process started from this test
// binary, makes it an MCP server over stdio (see TestMain): the upstream
// of TestUpstream.
const serverEnv = "TOOLC_DEV_TEST_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		srv := mcp.NewServer(&mcp.Implementation{Name: "dev-test", Version: "1.0.0"}, nil)
		srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo a message",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message"}},"required":["message"]}`)},
			func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var a struct{ Message string }
				json.Unmarshal(r.Params.Arguments, &a)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "up:" + a.Message}}}, nil
			})
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestUpstream: toolc dev serves a service whose handler is an upstream
// MCP server, and an edit of its contract that makes it differ from the
// server withdraws the tool; the edit undone restores it.
func TestUpstream(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEV_TEST_UPSTREAM_ON", "1")
	dir := t.TempDir()
	contract := filepath.Join(dir, "up", "up.cue")
	src := `package up

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name: "up", version: "1.0.0", description: "An upstream"
	upstream: {
		command: [` + strings.TrimSuffix(strings.TrimPrefix(mustJSON(exe), ""), "") + `]
		env: ` + serverEnv + `: {env: "DEV_TEST_UPSTREAM_ON"}
	}
	tools: echo: {
		description: "Echo a message"
		request: fields: message: {type: "string", description: "The message"}
	}
}
`
	writeFile(t, contract, src)
	rt := runtime.New(runtime.Options{CallTimeout: wait})
	status := &testsync.Buffer{}
	d, err := dev.New(dev.Options{Dir: dir, Runtime: rt, Status: status, CacheDir: t.TempDir(),
		Upstream: upstream.Options{Stderr: status, Logger: slog.New(slog.NewTextHandler(status, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := d.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		if t.Failed() || testing.Verbose() {
			t.Logf("status:\n%s", status)
		}
	}()
	served := func() []string {
		var names []string
		for _, info := range rt.Snapshot().Tools() {
			names = append(names, info.Tool.Name)
		}
		return names
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(wait)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never %s; status:\n%s", what, status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("served echo", func() bool { return slices.Equal(served(), []string{"echo"}) })
	res, err := rt.Call(ctx, "echo", json.RawMessage(`{"message":"hi"}`))
	if err != nil || res.IsError || res.Content[0].Text != "up:hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if regexp.MustCompile(`building`).MatchString(status.String()) {
		t.Errorf("toolc dev built a handler for an upstream service:\n%s", status)
	}

	writeFile(t, contract, strings.Replace(src, `"Echo a message"`, `"Echo a message, reviewed"`, 1))
	waitFor("withdrew echo", func() bool { return len(served()) == 0 && strings.Contains(status.String(), "withdrawn") })

	writeFile(t, contract, src)
	waitFor("restored echo", func() bool { return slices.Equal(served(), []string{"echo"}) })
	res, err = rt.Call(ctx, "echo", json.RawMessage(`{"message":"again"}`))
	if err != nil || res.IsError || res.Content[0].Text != "up:again" {
		t.Fatalf("echo after the restore = %+v, %v", res, err)
	}
}

func mustJSON(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}
