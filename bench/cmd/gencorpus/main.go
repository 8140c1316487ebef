// Command gencorpus writes a benchmark corpus of toolc contracts: a CUE
// module with SERVICES service packages of TOOLS tools each, which both
// `toolc check ./...` and `cue vet -c ./...` accept.
//
//	go run ./bench/cmd/gencorpus -services 100 -tools 20 -o /tmp/corpus
//	cd /tmp/corpus && toolc check ./... && cue vet -c ./...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolc/toolc/bench/corpus"
)

func main() {
	services := flag.Int("services", 100, "number of service packages")
	tools := flag.Int("tools", corpus.DefaultToolsPerService, "tools per service")
	seed := flag.Uint64("seed", corpus.DefaultSeed, "seed; the same seed gives the same corpus")
	out := flag.String("o", "", "output directory, which must be empty or not exist (required)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gencorpus [-services N] [-tools M] [-seed S] -o DIR")
		os.Exit(2)
	}
	st, err := corpus.Write(*out, corpus.Config{Services: *services, Tools: *tools, Seed: *seed})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
	fmt.Printf("gencorpus: wrote %s to %s\n", st, *out)
}
