package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// TestGate: a gated server answers ping while it loads, holds tools/list
// until the gate opens, then answers it with the loaded tools; a gate
// opened with an error answers the held requests with it.
func TestGate(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	for _, loadErr := range []error{nil, errors.New("the handler did not build")} {
		srv := mcpserver.New(rt, mcpserver.Options{})
		gate := mcpserver.NewGate()
		srv.AddReceivingMiddleware(gate.Hold)
		serverT, clientT := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ss, err := srv.Connect(ctx, serverT, nil)
		if err != nil {
			t.Fatal(err)
		}
		session, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, clientT, nil)
		if err != nil {
			t.Fatalf("initialize while loading: %v", err)
		}
		type answer struct {
			res *mcp.ListToolsResult
			err error
		}
		listed := make(chan answer, 1)
		go func() {
			res, err := session.ListTools(ctx, nil)
			listed <- answer{res, err}
		}()
		if err := session.Ping(ctx, nil); err != nil {
			t.Errorf("ping while loading: %v", err)
		}
		select {
		case a := <-listed:
			t.Fatalf("tools/list answered before the load was over: %v, %v", a.res, a.err)
		case <-time.After(200 * time.Millisecond):
		}
		gate.Open(loadErr)
		a := <-listed
		switch {
		case loadErr == nil && (a.err != nil || len(a.res.Tools) != len(rt.Snapshot().Tools())):
			t.Errorf("tools/list after the load = %v, %v; want the %d tools", a.res, a.err, len(rt.Snapshot().Tools()))
		case loadErr != nil && (a.err == nil || !strings.Contains(a.err.Error(), loadErr.Error())):
			t.Errorf("tools/list after a failed load = %v, %v; want its error", a.res, a.err)
		}
		if loadErr != nil {
			// Asked again, the answer is the same: a client can show it,
			// and the connection stays open. A later good load (toolc
			// dev, after a fix) opens the gate for good.
			if res, err := session.ListTools(ctx, nil); err == nil || !strings.Contains(err.Error(), loadErr.Error()) {
				t.Errorf("tools/list asked again after a failed load = %v, %v; want its error", res, err)
			}
			gate.Open(nil)
			if res, err := session.ListTools(ctx, nil); err != nil || len(res.Tools) != len(rt.Snapshot().Tools()) {
				t.Errorf("tools/list after a good load that followed a failed one = %v, %v", res, err)
			}
		}
		session.Close()
		ss.Close()
		cancel()
	}
}
