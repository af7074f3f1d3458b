package sql

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts SQL transactions by outcome.
type Metrics struct {
	// started is also what backfills watch to tell whether users are
	// active (ddl.Manager.SetForeground), so it is a plain counter.
	started                        atomic.Int64
	startedFunc                    prometheus.CounterFunc
	committed, aborted, conflicted prometheus.Counter
}

func newMetrics() *Metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "reorgdb", Subsystem: "sql", Name: name, Help: help})
	}
	m := &Metrics{
		committed:  c("transactions_committed_total", "SQL transactions committed."),
		aborted:    c("transactions_aborted_total", "SQL transactions rolled back or failed."),
		conflicted: c("transactions_conflicted_total", "SQL transactions aborted by a write-write conflict (error 1213)."),
	}
	m.startedFunc = prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "reorgdb", Subsystem: "sql",
		Name: "transactions_started_total", Help: "SQL transactions started."}, func() float64 { return float64(m.started.Load()) })
	return m
}

// Collectors returns the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.startedFunc, m.committed, m.aborted, m.conflicted}
}

func (m *Metrics) txnStarted()    { m.started.Add(1) }
func (m *Metrics) txnCommitted()  { m.committed.Inc() }
func (m *Metrics) txnAborted()    { m.aborted.Inc() }
func (m *Metrics) txnConflicted() { m.conflicted.Inc() }
