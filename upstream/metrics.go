package upstream

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is a Prometheus collector of the tools that upstream servers
// withdrew: toolc_upstream_withdrawals_total counts each time a tool was
// found to differ from its contract, and toolc_upstream_withdrawn is 1
// for each tool withdrawn now, both by tool and by the difference's rule
// (description-changed, field-removed, ...). It is made before the set
// it reports, which Use gives it, as /metrics is served while the
// servers start.
type Metrics struct {
	set atomic.Pointer[Set]
}

var _ prometheus.Collector = (*Metrics)(nil)

var (
	withdrawalsDesc = prometheus.NewDesc("toolc_upstream_withdrawals_total",
		"Times an upstream server's tool was found to differ from its contract and was withdrawn, by tool and difference (the lock's change rule).",
		[]string{"service", "tool", "difference"}, nil)
	withdrawnDesc = prometheus.NewDesc("toolc_upstream_withdrawn",
		"Upstream tools withdrawn now, as their live definition differs from the contract, by tool and difference.",
		[]string{"service", "tool", "difference"}, nil)
)

// Use makes m report s.
func (m *Metrics) Use(s *Set) { m.set.Store(s) }

func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- withdrawalsDesc
	ch <- withdrawnDesc
}

func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	s := m.set.Load()
	if s == nil {
		return
	}
	for name, srv := range s.servers {
		for _, d := range srv.Drift() {
			ch <- prometheus.MustNewConstMetric(withdrawalsDesc, prometheus.CounterValue, float64(d.Count), name, d.Tool, d.Rule)
		}
		for tool, changes := range srv.Withdrawn() {
			seen := map[string]bool{}
			for _, c := range changes {
				if !seen[c.Rule] {
					seen[c.Rule] = true
					ch <- prometheus.MustNewConstMetric(withdrawnDesc, prometheus.GaugeValue, 1, name, tool, c.Rule)
				}
			}
		}
	}
}
