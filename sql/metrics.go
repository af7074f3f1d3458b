package sql

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts SQL transactions by outcome.
type Metrics struct {
	started, committed, aborted, conflicted prometheus.Counter
}

func newMetrics() *Metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "reorgdb", Subsystem: "sql", Name: name, Help: help})
	}
	return &Metrics{
		started:    c("transactions_started_total", "SQL transactions started."),
		committed:  c("transactions_committed_total", "SQL transactions committed."),
		aborted:    c("transactions_aborted_total", "SQL transactions rolled back or failed."),
		conflicted: c("transactions_conflicted_total", "SQL transactions aborted by a write-write conflict (error 1213)."),
	}
}

// Collectors returns the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.started, m.committed, m.aborted, m.conflicted}
}

func (m *Metrics) txnStarted()    { m.started.Inc() }
func (m *Metrics) txnCommitted()  { m.committed.Inc() }
func (m *Metrics) txnAborted()    { m.aborted.Inc() }
func (m *Metrics) txnConflicted() { m.conflicted.Inc() }
