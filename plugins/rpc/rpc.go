// Package rpc is toolc's plugin protocol: it carries the calls of a
// service's handlers between the host (toolc serve, toolc dev) and the
// plugin process that runs them, as gRPC over github.com/hashicorp/go-plugin.
//
// A plugin's main serves its handlers with Serve, which is what the Serve
// that toolc gen go generates calls:
//
//	func main() {
//		rpc.Serve(Handlers(impl)...)
//	}
//
// The host launches the binary with Start and runs tools with Client.Call.
// The protocol is plugins/proto/toolc/plugin/v1/plugin.proto, versioned by
// ProtocolVersion.
//
// The handlers themselves are written against package plugins, which does
// not import this package: a service that runs its handlers in process
// (runtime.Local) links neither go-plugin nor gRPC.
package rpc

// The protocol's Go code comes from tools pinned in go.mod and tools/buf.mod,
// run with go tool, so regenerating it installs nothing (scripts/genproto
// runs the same command).
//go:generate go -C ../.. tool -modfile=tools/buf.mod buf generate --template plugins/proto/buf.gen.yaml

import plugin "github.com/hashicorp/go-plugin"

// ProtocolVersion is the newest version of the plugin protocol, a key under
// which both sides register in go-plugin's VersionedPlugins. Both sides
// speak every version from minProtocolVersion up to it, and go-plugin
// settles on the newest that the two share; a host and a plugin that share
// none refuse each other at the handshake.
const ProtocolVersion = 7

// minProtocolVersion is the oldest version this SDK still speaks, so that
// a plugin built against an older toolc keeps working with a newer host,
// and the other way round.
const minProtocolVersion = 1

// MaxMessageSize bounds one gRPC message each way (arguments in, one event
// or the result out). It is a ceiling for the transport; the runtime applies
// its own, smaller, per-call bounds.
const MaxMessageSize = 64 << 20

// flowWindow is the HTTP/2 flow-control window of a plugin's connection
// and of each stream on it, on both sides, fixed. With gRPC's default,
// dynamic windows, each side sent a BDP ping with almost every message of
// a call and answered the other's: two more frames per call, each a
// wake-up of the side that reads it, to size a window for a network that a
// Unix socket is not. Fixed windows cut the plugin's CPU time per call by
// a fifth (BENCHMARKS.md); a 4 MiB result takes as long as before.
const flowWindow = 1 << 20

// Handshake is go-plugin's handshake. The magic cookie is not a secret: it
// only tells a binary run by hand that it is a plugin and stops it there.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "TOOLC_PLUGIN",
	MagicCookieValue: "5b1e2f0c-toolc-handler-plugin",
}

// pluginName is the single plugin in the go-plugin PluginSet.
const pluginName = "toolc"
