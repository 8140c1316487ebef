//go:build unix

package tokens_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/tokens"
)

// BenchmarkMeasureAll times what toolc check adds to a run: the totals of
// every target (strict=false), and the table of toolc check --stats
// (strict=true: every target, and the strict ones too), on the bench
// corpus of 2,000 tools. cpu-ms/op is the process's CPU time, which a
// busy machine moves much less than the wall time.
func BenchmarkMeasureAll(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "corpus")
	if _, err := corpus.Write(dir, corpus.ForTools(2000)); err != nil {
		b.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		b.Fatal(err)
	}
	tokens.CountO200k("") // the vocabulary, built once per process
	for _, strict := range []bool{false, true} {
		b.Run(fmt.Sprintf("tools=2000/strict=%v", strict), func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				if _, err := tokens.MeasureAll(res.Catalog, strict); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkVocabulary times building the o200k_base vocabulary, which a
// process that counts tokens pays once.
func BenchmarkVocabulary(b *testing.B) {
	start := cpuTime()
	for b.Loop() {
		tokens.NewVocabulary()
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
