package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// heapInUse is the live heap once the garbage is collected.
func heapInUse() int64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestBodiesInFlightBounded: request bodies that arrive slowly hold, all
// together, no more than ConnLimits.MaxBodyMemory (past 64 KiB each): a
// body past it gets 503 and Retry-After, on /v1/call and /mcp alike,
// while small requests are served; and once the slow bodies go, large
// ones are taken again. Each body was bounded, but not their sum: a
// thousand connections each holding an unfinished maximal /v1/call body
// for the read timeout held gigabytes.
func TestBodiesInFlightBounded(t *testing.T) {
	cat, err := runtimetest.EnvelopeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, envelopeDispatchers()); err != nil {
		t.Fatal(err)
	}
	const budget = 8 << 20
	l := httpapi.ConnLimits{MaxBodyMemory: budget, ReadTimeout: 20 * time.Second}
	addr := serveLimited(t, rt, httpapi.Options{}, l)

	// Eight clients each send 64 KiB and 1.875 MiB of a 6 MiB body, then
	// wait: the first four take 7.5 of the 8 MiB budget, and the other
	// four are refused. One at a time, each read whole before the next
	// is sent: bodies read side by side would be refused in a cascade,
	// each at the moment the others had the budget, and leave it
	// emptier than the test needs (the freeze run under -race).
	const charged = 1920 << 10
	before := heapInUse()
	var slow []net.Conn
	refused := 0
	for i := range 8 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, 6<<20)
		head := `{"name":"measure","arguments":{"text":"`
		conn.Write([]byte(head + strings.Repeat("x", 64<<10+charged-len(head))))
		slow = append(slow, conn)
		if i >= 4 {
			// Past the budget: refused at once.
			conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("slow body %d, past the budget: %v", i+1, err)
			}
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
				t.Errorf("slow body %d, past the budget: %d", i+1, resp.StatusCode)
			}
			refused++
			continue
		}
		// Within the budget: wait until the server holds what was sent.
		for deadline := time.Now().Add(15 * time.Second); heapInUse()-before < int64(i+1)*charged; {
			if time.Now().After(deadline) {
				t.Fatalf("the server did not read slow body %d within 15 s", i+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	held := heapInUse() - before
	for _, conn := range slow[:4] {
		conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			t.Errorf("a slow body within the budget was answered: %d", resp.StatusCode)
		}
	}
	t.Logf("eight unfinished bodies of 2 MiB, four of them refused, hold %d KiB", held>>10)
	// What the bodies hold is what was read of them, in buffers that
	// grow by a quarter or so at a time: half the budget again is room.
	if held > budget*3/2+8*(64<<10) {
		t.Errorf("eight unfinished bodies of 2 MiB hold %d MiB, with a budget of %d MiB", held>>20, budget>>20)
	}
	if refused == 0 {
		t.Error("no unfinished body was refused, though together they are past the budget")
	}

	// Meanwhile: a body more than 64 KiB past what is left (0.5 MiB) is
	// refused, a small one served.
	probe := `{"name":"measure","arguments":{"text":"` + strings.Repeat("y", 600<<10) + `"}}`
	r := runtimetest.Do(t, "POST", "http://"+addr+"/v1/call", probe, nil)
	runtimetest.WantStatus(t, r, http.StatusServiceUnavailable, "request bodies")
	mcpBig := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("y", 600<<10) + `"}}`
	r = runtimetest.Do(t, "POST", "http://"+addr+"/mcp", mcpBig, map[string]string{"Accept": "application/json, text/event-stream"})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("a large MCP body past the budget: %d %.200s", r.Status, r.Body)
	}
	if res := runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", "http://"+addr+"/v1/call", `{"name":"ping"}`, nil)); res.IsError {
		t.Errorf("a small call while the budget is spent: %+v", res)
	}

	// Once the slow bodies go, a large one is taken.
	big := `{"name":"measure","arguments":{"text":"` + strings.Repeat("y", 3<<20) + `"}}`
	for _, conn := range slow {
		conn.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = runtimetest.Do(t, "POST", "http://"+addr+"/v1/call", big, nil)
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a large body once the slow ones closed: %d %.200s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// envelopeDispatchers are the handlers of the envelope catalog, as
// envelopeHandler serves them.
func envelopeDispatchers() map[string]runtime.Dispatcher {
	type none struct{}
	return map[string]runtime.Dispatcher{"envelope": runtime.Local(
		plugins.Handle("ping", func(context.Context, none) (*plugins.Result, error) { return plugins.Text("ping"), nil }),
		plugins.Handle("other", func(context.Context, none) (*plugins.Result, error) { return plugins.Text("other"), nil }),
		plugins.Handle("measure", func(_ context.Context, req struct{ Text string }) (*plugins.Result, error) {
			return plugins.JSON(map[string]int{"bytes": len(req.Text)})
		}),
	)}
}

// TestHeadersBounded: a request's header is bounded too (MaxHeaderBytes,
// 431 past it), where net/http's default let each connection hold a
// megabyte of it; and an unknown ?format= is quoted cut, not echoed whole.
func TestHeadersBounded(t *testing.T) {
	cat, err := runtimetest.EnvelopeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, envelopeDispatchers()); err != nil {
		t.Fatal(err)
	}
	addr := serveLimited(t, rt, httpapi.Options{}, httpapi.ConnLimits{})
	// The server answers 431 and closes, maybe before it reads the whole
	// header, and the client may see the close first: anything but an
	// answer that served the request will do.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Padding: %s\r\n\r\n", addr, strings.Repeat("x", 200<<10))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil && resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 200 KiB header: %d, want 431", resp.StatusCode)
	}
	r := runtimetest.Do(t, "GET", "http://"+addr+"/healthz", "", map[string]string{"Authorization": "Bearer " + strings.Repeat("t", 8<<10)})
	if r.Status != http.StatusOK {
		t.Errorf("an 8 KiB bearer token: %d", r.Status)
	}
	r = runtimetest.Do(t, "GET", "http://"+addr+"/v1/tools?format="+strings.Repeat("f", 50<<10), "", nil)
	if r.Status != http.StatusBadRequest || len(r.Body) > 1024 || !strings.Contains(r.Body, `unknown format`) {
		t.Errorf("a 50 KiB format: %d, %d bytes: %.200s", r.Status, len(r.Body), r.Body)
	}
}
