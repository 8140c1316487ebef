package runtime_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/toolc/toolc/internal/runtimetest"
)

// The integration tests run the real thing: the contracts in testdata
// compiled by the compiler, the faulty handler plugin built by host.Build
// and started by host.Start, and calls through go-plugin (the fixture of
// internal/runtimetest, which the tests of mcpserver and httpapi share).
// The plugin is built once, on first use, so that tests that need no
// plugin do not wait for the go command.

func TestMain(m *testing.M) {
	os.Exit(runtimetest.Main(m))
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
