// Command floorplugin is the floor of the serving comparison's plugin
// hop: query_weather as a go-plugin gRPC plugin with no toolc in it (see
// package floorplugin). `mcppeer -server floor -plugin PATH` runs it.
package main

import "github.com/toolc/toolc/bench/serving/floorplugin"

func main() { floorplugin.Serve() }
