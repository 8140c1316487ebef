package catalog_test

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/catalog"
)

// benchTools is the size of the benchmark catalog: DESIGN.md §9 sets the
// targets for 2000 tools (load < 20 ms, each projection < 10 ms).
const benchTools = 2000

var (
	benchOnce sync.Once
	benchData []byte
	benchErr  error
)

// benchCatalog compiles the bench/corpus corpus of 2000 tools once and
// returns its catalog file. The corpus is realistic: several services,
// every field type, bounds, enums, defaults, examples and responses.
func benchCatalog(b *testing.B) []byte {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolc-catalog-bench-")
		if err != nil {
			benchErr = err
			return
		}
		defer os.RemoveAll(dir)
		if _, err := corpus.Write(dir, corpus.ForTools(benchTools)); err != nil {
			benchErr = err
			return
		}
		cat, err := compileDir(dir, "./...")
		if err != nil {
			benchErr = err
			return
		}
		benchData, benchErr = cat.Marshal()
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchData
}

// loop runs op for the benchmark's iterations and reports, besides the
// wall time, the process's CPU time per operation (cpu-ns/op), garbage
// collection included: on a busy machine it says what an operation costs
// when the wall time mostly says how long it waited for a CPU.
func loop(b *testing.B, op func() error) {
	b.Helper()
	b.ReportAllocs()
	start, ok := processCPU()
	n := 0
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if end, _ := processCPU(); ok && n > 0 {
		b.ReportMetric(float64((end-start)/time.Duration(n)), "cpu-ns/op")
	}
}

func parseBench(b *testing.B) *catalog.Catalog {
	b.Helper()
	c, err := catalog.Parse(benchCatalog(b))
	if err != nil {
		b.Fatal(err)
	}
	if n := len(c.ToolNames()); n != benchTools {
		b.Fatalf("the benchmark catalog has %d tools, want %d", n, benchTools)
	}
	return c
}

// BenchmarkParse is a catalog load of 2000 tools: decode, check the
// format, verify every fingerprint. Target: < 20 ms.
func BenchmarkParse(b *testing.B) {
	data := benchCatalog(b)
	parseBench(b)
	b.SetBytes(int64(len(data)))
	loop(b, func() error {
		_, err := catalog.Parse(data)
		return err
	})
}

// BenchmarkMarshal writes the catalog file of 2000 tools, sealing it.
func BenchmarkMarshal(b *testing.B) {
	c := parseBench(b)
	loop(b, func() error {
		_, err := c.Marshal()
		return err
	})
}

// BenchmarkProject is each projection of 2000 tools, as Go values
// (the typed projections) and as the JSON a request carries (ProjectJSON), with and
// without strict mode. Target: < 10 ms.
func BenchmarkProject(b *testing.B) {
	c := parseBench(b)
	for _, target := range catalog.Targets() {
		for _, m := range modes {
			b.Run(string(target)+m.suffix+"/Project", func(b *testing.B) {
				loop(b, func() error {
					project(c, target, m.opts)
					return nil
				})
			})
			b.Run(string(target)+m.suffix+"/ProjectJSON", func(b *testing.B) {
				loop(b, func() error {
					_, err := c.ProjectJSON(target, m.opts)
					return err
				})
			})
		}
	}
}
