package httpapi

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// metrics serves the runtime's counts of its calls (runtime.Stats) as
// Prometheus metrics, in a registry of the handler's own: no global
// state, so tests and several runtimes in one process do not collide.
type metrics struct {
	registry *prometheus.Registry
}

var (
	callsDesc = prometheus.NewDesc("toolc_calls_total",
		"Tool calls, by tool and outcome: ok, tool_error, cancelled (the caller cancelled or disconnected), deadline (the caller's own deadline passed), refused (the server was shutting down).",
		[]string{"tool", "outcome"}, nil)
	errorsDesc = prometheus.NewDesc("toolc_call_errors_total",
		"Tool calls that ended in a tool error, by tool and kind (invalid_arguments, handler, timeout, result, overloaded).",
		[]string{"tool", "kind"}, nil)
	latencyDesc = prometheus.NewDesc("toolc_call_duration_seconds",
		"Tool call latency, validation and handler included, by tool.",
		[]string{"tool"}, nil)
)

func newMetrics(rt *runtime.Runtime, more ...prometheus.Collector) *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.registry.MustRegister(callCollector{rt},
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	m.registry.MustRegister(more...)
	return m
}

// callCollector reads the runtime's counts at each scrape.
type callCollector struct{ rt *runtime.Runtime }

func (callCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- callsDesc
	ch <- errorsDesc
	ch <- latencyDesc
}

func (c callCollector) Collect(ch chan<- prometheus.Metric) {
	bounds := runtime.LatencyBounds()
	for _, s := range c.rt.Stats() {
		for outcome, n := range s.Outcomes {
			ch <- prometheus.MustNewConstMetric(callsDesc, prometheus.CounterValue, float64(n), s.Tool, outcome)
		}
		for kind, n := range s.Errors {
			ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.CounterValue, float64(n), s.Tool, kind)
		}
		if s.Latency.Count == 0 {
			continue // refused calls only: they have no duration
		}
		// Prometheus's buckets are cumulative.
		buckets := make(map[float64]uint64, len(bounds))
		var below uint64
		for i, b := range bounds {
			below += s.Latency.Counts[i]
			buckets[b] = below
		}
		ch <- prometheus.MustNewConstHistogram(latencyDesc, s.Latency.Count, s.Latency.Sum.Seconds(), buckets, s.Tool)
	}
}

// callerMetrics serves /metrics to an OAuth caller: the series of the
// tools it sees, as tools/list shows them. The series of every tool would
// name the hidden ones; those of a tool a reload removed are not shown
// either, as nothing says whom it was for.
func callerMetrics(rt *runtime.Runtime, m *metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, snap := oauth.CallerFrom(r.Context()), rt.Snapshot()
		g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
			// Gather builds the families afresh for each call: they are
			// this request's to filter.
			families, err := m.registry.Gather()
			out := families[:0]
			for _, f := range families {
				f.Metric = slices.DeleteFunc(f.Metric, func(dm *dto.Metric) bool {
					for _, l := range dm.GetLabel() {
						if l.GetName() == "tool" {
							t, ok := snap.ByName(l.GetValue())
							return !ok || !runtime.Allows(c, t.Tool)
						}
					}
					return false
				})
				if len(f.Metric) > 0 {
					out = append(out, f)
				}
			}
			return out, err
		})
		promhttp.HandlerFor(g, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
}
