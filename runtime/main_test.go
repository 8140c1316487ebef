package runtime_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/runtime"
)

// The integration tests run the real thing: the contracts in testdata
// compiled by the compiler, the faulty handler plugin built by host.Build
// and started by host.Start, and calls through go-plugin (the fixture of
// internal/runtimetest, which the tests of mcpserver and httpapi share).
// The plugin is built once, on first use, so that tests that need no
// plugin do not wait for the go command.

func TestMain(m *testing.M) {
	if os.Getenv(hostHelperEnv) != "" {
		runHostHelper()
		return
	}
	os.Exit(runtimetest.Main(m))
}

// structured decodes a result's structured content.
func structured(t testing.TB, res *runtime.Result) map[string]any {
	t.Helper()
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		raw = data
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}

// wantToolError fails unless res is a tool error whose text holds each of
// want.
func wantToolError(t testing.TB, res *runtime.Result, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("got a result, want a tool error: %s", runtimetest.Text(res))
	}
	got := runtimetest.Text(res)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("tool error %q does not say %q", got, w)
		}
	}
}

// echoWorks checks that the echo tool answers.
func echoWorks(t testing.TB, rt *runtime.Runtime) {
	t.Helper()
	res := runtimetest.Call(t, rt, "echo", `{"text":"still here"}`)
	runtimetest.WantOK(t, res)
	if got := structured(t, res)["echo"]; got != "still here" {
		t.Fatalf("echo answered %v", got)
	}
}

// recorded returns what the record tool has written so far.
func recorded(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(runtimetest.Setup(t).Record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

var markers atomic.Int64

// marker returns a string unique to the test process, for finding a call
// in the record file.
func marker() string {
	return fmt.Sprintf("marker-%d-%06d", os.Getpid(), markers.Add(1))
}
