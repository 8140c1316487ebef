// Package plugins is the handler SDK and the host side of toolc's plugin
// protocol.
//
// A plugin's main registers one typed Handler per tool and serves them:
//
//	func main() {
//		plugins.Serve(
//			plugins.Handle("get_forecast", func(ctx context.Context, req Forecast) (*plugins.Result, error) {
//				plugins.Progress(ctx, 1, 2, "fetching")
//				return plugins.JSON(lookup(req))
//			}),
//		)
//	}
//
// The host launches the binary with Start and runs tools with Client.Call.
// Both sides speak gRPC over github.com/hashicorp/go-plugin; the protocol is
// proto/toolc/plugin/v1/plugin.proto, versioned by ProtocolVersion.
//
// The same Handler values also run in-process: call Handler.Call directly,
// with WithEvents to receive progress and log events.
package plugins

// The protocol's Go code comes from tools pinned in go.mod and tools/buf.mod,
// run with go tool, so regenerating it installs nothing (scripts/genproto
// runs the same command).
//go:generate go -C .. tool -modfile=tools/buf.mod buf generate --template plugins/proto/buf.gen.yaml

import (
	"context"
	"encoding/json"

	plugin "github.com/hashicorp/go-plugin"
)

// ProtocolVersion is the newest version of the plugin protocol, a key under
// which both sides register in go-plugin's VersionedPlugins. Both sides
// speak every version from minProtocolVersion up to it, and go-plugin
// settles on the newest that the two share; a host and a plugin that share
// none refuse each other at the handshake.
const ProtocolVersion = 3

// minProtocolVersion is the oldest version this SDK still speaks, so that
// a plugin built against an older toolc keeps working with a newer host,
// and the other way round.
const minProtocolVersion = 1

// MaxMessageSize bounds one gRPC message each way (arguments in, one event
// or the result out). It is a ceiling for the transport; the runtime applies
// its own, smaller, per-call bounds.
const MaxMessageSize = 64 << 20

// Handshake is go-plugin's handshake. The magic cookie is not a secret: it
// only tells a binary run by hand that it is a plugin and stops it there.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "TOOLC_PLUGIN",
	MagicCookieValue: "5b1e2f0c-toolc-handler-plugin",
}

// pluginName is the single plugin in the go-plugin PluginSet.
const pluginName = "toolc"

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
