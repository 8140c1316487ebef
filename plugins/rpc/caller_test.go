package rpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// TestCallerProtocolVersions: a host of version 4 sends the caller to a
// plugin of version 4 and to no older one, which it still serves; a plugin
// of version 4 under an older host sees no caller, even if that host's
// request held one; and a handler sees the caller the host was given.
func TestCallerProtocolVersions(t *testing.T) {
	who := plugins.Caller{Subject: "alice", ClientID: "app", Scopes: []string{"notes:use", "notes:read"}}
	ctx := plugins.WithCaller(context.Background(), who)
	for _, v := range []string{"1", "2", "3", "4"} {
		c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Path, cfg.Args = filepath.Join(bin, "raw"), []string{"-protocol", v} })
		res, err := c.Call(ctx, "say", "c", json.RawMessage(`{"Message":"hi"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Content[0].Text != `{"Message":"hi"}` {
			t.Errorf("plugin of version %s: %+v", v, res)
		}
		sent := len(res.Content) == 2 && res.Content[1].Text == "caller"
		if sent != (v == "4") {
			t.Errorf("plugin of version %s: caller sent %t", v, sent)
		}
	}

	c, _ := startToolbox(t)
	if c.version != ProtocolVersion {
		t.Fatalf("agreed on version %d, want %d", c.version, ProtocolVersion)
	}
	res, err := c.Call(ctx, "caller", "c", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); got != `{"Subject":"alice","ClientID":"app","Scopes":["notes:use","notes:read"]}` {
		t.Errorf("the handler saw %s", got)
	}
	if res := call(t, c, "caller", `{}`); text(res) != "no caller" {
		t.Errorf("a call without a caller: the handler saw %s", text(res))
	}

	for _, version := range []int{1, 2, 3} {
		rpc, _ := dialToolbox(t, version)
		stream, err := rpc.Call(context.Background(), &pb.CallRequest{Tool: "caller", ArgumentsJson: []byte(`{}`),
			Caller: &pb.Caller{Subject: "mallory", Scopes: []string{"admin"}}})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.GetResult().GetContent(); len(got) != 1 || got[0].GetText().GetText() != "no caller" {
			t.Errorf("host of version %d: the handler saw %v, want no caller", version, got)
		}
	}
}
