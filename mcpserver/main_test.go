package mcpserver_test

import (
	"os"
	"testing"

	"github.com/toolc/toolc/internal/runtimetest"
)

// The tests share internal/runtimetest's fixture: the test contracts of
// runtime/testdata compiled, and the faulty handler plugin built once.
func TestMain(m *testing.M) { os.Exit(runtimetest.Main(m)) }
