// Command notes is the handler plugin of the notes test service: each tool
// answers with its name and the note's id, so that a test can tell which
// tool answered which caller.
package main

import (
	"context"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/plugins/rpc"
)

type noteReq struct {
	ID string `json:"id"`
}

func main() {
	rpc.Serve(
		plugins.Handle("list_notes", func(context.Context, struct{}) (*plugins.Result, error) {
			return plugins.Text("notes: n1 n2"), nil
		}),
		plugins.Handle("read_note", func(_ context.Context, req noteReq) (*plugins.Result, error) {
			return plugins.Text("read " + req.ID), nil
		}),
		plugins.Handle("write_note", func(_ context.Context, req noteReq) (*plugins.Result, error) {
			return plugins.Text("wrote " + req.ID), nil
		}),
	)
}
