// Command guarded is the handler of the guarded service: each tool answers
// with who called it, as plugins.CallerOf tells.
package main

import (
	"context"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/plugins/rpc"
)

type noteRequest struct {
	ID string `json:"id"`
}

type answer struct {
	Tool    string   `json:"tool"`
	ID      string   `json:"id"`
	Subject string   `json:"subject"`
	Client  string   `json:"client"`
	Scopes  []string `json:"scopes"`
}

func main() {
	rpc.Serve(handler("list_notes"), handler("read_note"), handler("write_note"))
}

func handler(tool string) plugins.Handler {
	return plugins.Handle(tool, func(ctx context.Context, req noteRequest) (*plugins.Result, error) {
		caller, ok := plugins.CallerOf(ctx)
		if !ok {
			// --token, no auth, --stdio: nobody to act for.
			return plugins.Errorf("%s acts for a signed-in user; serve it with --auth-issuer", tool), nil
		}
		return plugins.JSON(answer{Tool: tool, ID: req.ID, Subject: caller.Subject, Client: caller.ClientID, Scopes: caller.Scopes})
	})
}
