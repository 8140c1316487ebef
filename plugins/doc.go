// Package plugins is the handler SDK: what a tool's handler is written
// against, whether it runs in a plugin process or in the process of a
// service that embeds its catalog.
//
// A handler implements one tool. Most are made by Handle, from a function
// of a typed request, usually through the Handlers function that toolc gen
// go generates:
//
//	plugins.Handle("get_forecast", func(ctx context.Context, req Forecast) (*plugins.Result, error) {
//		plugins.Progress(ctx, 1, 2, "fetching")
//		return plugins.JSON(lookup(req))
//	})
//
// In a service that embeds its catalog, runtime.Local runs the handlers in
// process. As a plugin, a main serves them to toolc with the generated
// Serve, which calls package plugins/rpc, the plugin protocol. This package
// imports neither that package nor gRPC, so that an embedding service does
// not link them.
package plugins

import (
	"context"
	"encoding/json"
)

// A Handler runs one tool.
type Handler interface {
	// Tool is the tool's name, as in the catalog.
	Tool() string
	// Call runs the tool on its arguments, a JSON object that the host has
	// already validated. A panic becomes an IsError result. A non-nil error
	// is a failed handler: callers report it as a tool error (the plugin
	// server does so), so it never ends a session.
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}
