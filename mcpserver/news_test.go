package mcpserver

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/testsync"
	"github.com/toolc/toolc/runtime"
)

// TestStdioListChangedOnlyOnChange connects go-sdk's client over stdio
// while the first load still runs, as toolc serve --stdio and dev --stdio
// are connected, in both kinds of revision: the load is no change to the
// client, which lists the tools after it (held by the gate, or later), so
// it hears no list_changed; a reload that changes the tools after it
// listed them is one, and it hears it, and again for a second change it
// has not listed since.
func TestStdioListChangedOnlyOnChange(t *testing.T) {
	for _, tc := range []struct {
		revision       string
		listDuringLoad bool
	}{
		{"2025-11-25", true}, {"2025-11-25", false}, {"2026-07-28", true}, {"2026-07-28", false},
	} {
		t.Run(fmt.Sprintf("%s, listing during the load %v", tc.revision, tc.listDuringLoad), func(t *testing.T) {
			rt := runtime.New(runtime.Options{}) // nothing loaded, as at the start of toolc serve --stdio
			srv := New(rt, Options{})
			gate := NewGate()
			srv.AddReceivingMiddleware(gate.Hold)
			clientIn, serverOut := io.Pipe()
			serverIn, clientOut := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan struct{})
			go func() {
				defer close(served)
				ServeStdio(ctx, rt, srv, serverIn, serverOut, StdioOptions{})
			}()
			var changed atomic.Int32
			client := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
			})
			session, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, &mcp.ClientSessionOptions{ProtocolVersion: tc.revision})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				session.Close()
				cancel()
				serverIn.Close()
				clientIn.Close()
				<-served
			})
			list := func() int {
				t.Helper()
				res, err := session.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				return len(res.Tools)
			}
			listed := make(chan int, 1)
			if tc.listDuringLoad {
				go func() { listed <- list() }()
				time.Sleep(50 * time.Millisecond) // the list is held by the gate
			}

			// The first load.
			if _, err := rt.Swap(testCatalog(), testDispatchers(&ran{})); err != nil {
				t.Fatal(err)
			}
			gate.Open(nil)
			if tc.listDuringLoad {
				if n := <-listed; n == 0 {
					t.Fatal("the list held during the load is empty")
				}
			}
			time.Sleep(300 * time.Millisecond) // go-sdk sends list_changed 10 ms after a change
			if n := changed.Load(); n != 0 {
				t.Errorf("%d list_changed after connecting, before anything changed for the client", n)
			}
			if !tc.listDuringLoad && list() == 0 {
				t.Fatal("no tools after the load")
			}

			// Two changes: the first after the client listed, the second
			// before it listed again.
			for i := range 2 {
				cat := testCatalog()
				cat.Services[0].Tools[1].Description = fmt.Sprintf("Answer, version %d", i+2)
				cat.Seal()
				if _, err := rt.Swap(cat, testDispatchers(&ran{})); err != nil {
					t.Fatal(err)
				}
				testsync.WaitFor(t, 5*time.Second, "list_changed", func() bool { return changed.Load() == int32(i+1) })
			}
			time.Sleep(100 * time.Millisecond)
			if n := changed.Load(); n != 2 {
				t.Errorf("%d list_changed for two changes", n)
			}
		})
	}
}
