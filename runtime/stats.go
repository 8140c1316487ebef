package runtime

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// The runtime counts every call it ends or refuses, by tool, from New on:
// how each ended, the kinds of its tool errors, and a histogram of how
// long each took. Stats reads the counts; package httpapi serves them as
// Prometheus metrics at /metrics, so that the runtime links no metrics
// library, and a call made before the HTTP handler exists (or with
// Runtime.Call directly) counts all the same.

// Outcomes of a call, as ToolStats.Outcomes counts them.
var outcomes = [...]string{"ok", "tool_error", "cancelled", "deadline", "refused"}

const (
	outcomeIndexOK = iota
	outcomeIndexToolError
	outcomeIndexCancelled
	outcomeIndexDeadline
	outcomeIndexRefused
)

// LatencyBounds are the upper bounds, in seconds, of the buckets of
// ToolStats.Latency: 100 µs to 26 s, each four times the last.
func LatencyBounds() []float64 {
	b := make([]float64, latencyBuckets)
	x := 0.0001
	for i := range b {
		b[i] = x
		x *= 4
	}
	return b
}

// latencyBuckets is the number of LatencyBounds.
const latencyBuckets = 10

// latencyBounds are LatencyBounds, computed once.
var latencyBounds = LatencyBounds()

// ToolStats counts the calls of one tool since the runtime was made.
type ToolStats struct {
	// Tool is the tool's function name.
	Tool string
	// Outcomes counts the calls by how they ended: ok, tool_error,
	// cancelled (the caller cancelled or went away), deadline (the
	// caller's own deadline passed) or refused (the runtime was
	// draining). An outcome no call had is absent.
	Outcomes map[string]uint64
	// Errors counts the tool errors by kind: invalid_arguments, handler,
	// timeout, result, overloaded or missing_capability.
	Errors map[string]uint64
	// Latency is the histogram of the durations of the calls that ran
	// (all but the refused ones), validation and handler included.
	Latency Histogram
}

// Histogram is a histogram of call durations.
type Histogram struct {
	// Counts[i] counts the calls that took at most LatencyBounds()[i]
	// seconds and more than the bound before; the last counts those over
	// every bound.
	Counts []uint64
	// Count is the number of calls, Sum their durations added up.
	Count uint64
	Sum   time.Duration
}

// toolStats are the counters of one tool, updated by each call without a
// lock.
type toolStats struct {
	outcomes [len(outcomes)]atomic.Uint64
	buckets  [latencyBuckets + 1]atomic.Uint64
	sum      atomic.Int64 // nanoseconds

	mu     sync.Mutex
	errors map[string]uint64 // tool errors are rarer than calls: a map under a lock
}

// toolStats returns the counters of a tool, made on first use. A tool
// keeps them across swaps, so that a reload does not reset its counts.
func (rt *Runtime) toolStats(tool string) *toolStats {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	s := rt.stats[tool]
	if s == nil {
		s = &toolStats{errors: map[string]uint64{}}
		rt.stats[tool] = s
	}
	return s
}

// observe counts a finished call: its outcome, its latency and, for a
// tool error, its kind. A call whose caller went away is counted too, as
// cancelled or deadline, so that the counts add up to the calls made.
func (s *toolStats) observe(start time.Time, errKind string, err error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		s.outcomes[outcomeIndexDeadline].Add(1)
	case err != nil:
		s.outcomes[outcomeIndexCancelled].Add(1)
	case errKind != "":
		s.outcomes[outcomeIndexToolError].Add(1)
		s.mu.Lock()
		s.errors[errKind]++
		s.mu.Unlock()
	default:
		s.outcomes[outcomeIndexOK].Add(1)
	}
	took := time.Since(start)
	s.buckets[sort.SearchFloat64s(latencyBounds, took.Seconds())].Add(1)
	s.sum.Add(int64(took))
}

// refused counts a call turned away because the runtime is draining.
func (s *toolStats) refused() { s.outcomes[outcomeIndexRefused].Add(1) }

// Stats returns the counts of every tool that has been called, by tool
// name.
func (rt *Runtime) Stats() []ToolStats {
	rt.mu.Lock()
	names := slices.Sorted(maps.Keys(rt.stats))
	all := make([]*toolStats, len(names))
	for i, n := range names {
		all[i] = rt.stats[n]
	}
	rt.mu.Unlock()
	var out []ToolStats
	for i, s := range all {
		ts := ToolStats{Tool: names[i], Outcomes: map[string]uint64{}, Errors: map[string]uint64{}}
		for j := range s.outcomes {
			if n := s.outcomes[j].Load(); n > 0 {
				ts.Outcomes[outcomes[j]] = n
			}
		}
		s.mu.Lock()
		maps.Copy(ts.Errors, s.errors)
		s.mu.Unlock()
		ts.Latency.Counts = make([]uint64, len(s.buckets))
		for j := range s.buckets {
			ts.Latency.Counts[j] = s.buckets[j].Load()
			ts.Latency.Count += ts.Latency.Counts[j]
		}
		ts.Latency.Sum = time.Duration(s.sum.Load())
		if len(ts.Outcomes) > 0 {
			out = append(out, ts)
		}
	}
	return out
}
