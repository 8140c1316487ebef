package httpapi_test

import (
	"fmt"
	"net"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/bodymem"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/runtime"
)

// TestBodyMemoryAtLimits measures what unfinished request bodies hold at
// the default limits (BENCHMARKS.md, "Memory at the limits"): 1024
// connections, the default cap, of which some send 2 MiB of a 6 MiB
// /v1/call body, more than the 128 MiB budget takes, and the rest 64 KiB,
// what a body holds free of the budget; then all wait. With
// TOOLC_LIMIT_MEMORY=1; TOOLC_LIMIT_MEMORY=before measures the same with no
// budget, 128 connections of 2 MiB, as toolc served before.
func TestBodyMemoryAtLimits(t *testing.T) {
	mode := os.Getenv("TOOLC_LIMIT_MEMORY")
	if mode == "" {
		t.Skip("TOOLC_LIMIT_MEMORY=1 measures the memory at the limits")
	}
	cat, err := runtimetest.EnvelopeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, envelopeDispatchers()); err != nil {
		t.Fatal(err)
	}
	l := httpapi.ConnLimits{ReadTimeout: 5 * time.Minute}
	large, small := 80, httpapi.DefaultMaxConns-80
	if mode == "before" {
		l.MaxBodyMemory, large, small = -1, 128, 0
	}
	addr := serveLimited(t, rt, httpapi.Options{}, l)
	head := `{"name":"measure","arguments":{"text":"`
	body := []byte(head + strings.Repeat("x", 2<<20+bodymem.Free-len(head)))
	free := body[:bodymem.Free-256]

	memInUse := func() int64 {
		goruntime.GC()
		goruntime.GC()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return int64(m.HeapInuse + m.StackInuse)
	}
	before := memInUse()
	refused := 0
	for i := range large + small {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, 6<<20)
		send := body
		if i >= large {
			send = free
		}
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(send); err != nil {
			refused++
		}
	}
	time.Sleep(2 * time.Second) // the server has read what came
	held := memInUse() - before
	fmt.Printf("%s: %d bodies of 2 MiB (%d refused while sending) and %d of 64 KiB: %.1f MiB held\n", mode, large, refused, small, float64(held)/(1<<20))
}
