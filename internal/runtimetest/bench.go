package runtimetest

import (
	"encoding/json"
	"strings"
)

// BenchText is the payload of the call benchmarks: 1 KiB of text, as in
// the plugins package's BenchmarkRawGoPlugin, so that the two compare.
var BenchText = strings.Repeat("x", 1024)

// BenchArgs are the arguments of the benchmarks' calls of say: BenchText.
var BenchArgs = json.RawMessage(`{"text":"` + BenchText + `"}`)
