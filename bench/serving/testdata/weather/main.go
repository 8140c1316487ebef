// Command weather is the handler plugin of the serving comparison's
// query_weather (package serving), answered by weather.Answer.
package main

import (
	"github.com/toolc/toolc/bench/serving/weather"
	"github.com/toolc/toolc/plugins/rpc"
)

func main() { rpc.Serve(weather.Handler()) }
