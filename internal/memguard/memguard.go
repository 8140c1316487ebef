// Package memguard stops a command whose heap grows past a limit, with a
// message, before the machine runs out of memory. CUE evaluates what a
// contract computes, and a contract can compute without bound ([for x in
// list.Range(0, 1e9, 1) {x}]): no CUE API bounds an evaluation, so a
// hostile contract in a pull request would otherwise take the CI runner's
// memory and end in the Go runtime's "out of memory" stack trace.
package memguard

import (
	"runtime/metrics"
	"time"

	"github.com/toolc/toolc/internal/inputfile"
)

// DefaultLimit is the memory a compiling command may use when
// $TOOLC_MAX_MEMORY does not say: far above what a real catalog needs (the
// 300-tool corpus compiles in well under 200 MiB).
const DefaultLimit = 3 << 30

// Limit is the limit that $TOOLC_MAX_MEMORY (read through getenv) sets,
// as inputfile.ParseSize reads a size (8GiB), or DefaultLimit.
func Limit(getenv func(string) string) (int64, error) {
	v := getenv("TOOLC_MAX_MEMORY")
	if v == "" {
		return DefaultLimit, nil
	}
	return inputfile.ParseSize(v)
}

// interval is how often the heap is sampled: reading runtime/metrics does
// not stop the world, and a tenth of a second lets little more than the
// limit be allocated before the check sees it.
const interval = 100 * time.Millisecond

// Watch calls exceeded, once, from another goroutine, when the memory
// the Go runtime holds from the system (what it mapped, less what it gave
// back: about the process's resident size) goes past limit bytes. stop
// ends the watch.
func Watch(limit uint64, exceeded func(used uint64)) (stop func()) {
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 || sample[1].Value.Kind() != metrics.KindUint64 {
				return // a runtime without these metrics: nothing to watch
			}
			if used := sample[0].Value.Uint64() - sample[1].Value.Uint64(); used > limit {
				exceeded(used)
				return
			}
		}
	}()
	return func() { close(done) }
}
