package server

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reorgdb/reorgdb/ddl"
)

// ddlCollector exports the progress of running schema-change jobs.
type ddlCollector struct {
	mgr                                    *ddl.Manager
	rows, total, sorted, spilled, ingested *prometheus.Desc
	running                                *prometheus.Desc
}

func newDDLCollector(mgr *ddl.Manager) *ddlCollector {
	labels := []string{"job", "table", "mode", "phase"}
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("reorgdb_ddl_job_"+name, help, labels, nil)
	}
	return &ddlCollector{
		mgr:      mgr,
		rows:     d("rows", "Rows backfilled so far."),
		total:    d("rows_estimate", "Estimated rows to backfill."),
		sorted:   d("sorted_bytes", "Bytes of index entries sorted (ingest mode)."),
		spilled:  d("spilled_bytes", "Bytes of sorted runs written to the temp dir (ingest mode)."),
		ingested: d("ingested_bytes", "Bytes of index entries ingested (ingest mode)."),
		running:  prometheus.NewDesc("reorgdb_ddl_jobs_running", "Unfinished schema-change jobs.", nil, nil),
	}
}

func (c *ddlCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.rows, c.total, c.sorted, c.spilled, c.ingested, c.running} {
		ch <- d
	}
}

func (c *ddlCollector) Collect(ch chan<- prometheus.Metric) {
	n := 0
	for _, j := range c.mgr.Jobs(0) {
		if j.State.Finished() {
			continue
		}
		n++
		phase := j.SchemaState.String()
		if i := strings.Index(j.Comment, "phase="); i >= 0 {
			phase = strings.Fields(j.Comment[i+len("phase="):])[0]
		}
		lv := []string{fmt.Sprint(j.ID), j.DBName + "." + j.TableName, j.Mode, phase}
		g := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), lv...)
		}
		g(c.rows, j.RowCount)
		g(c.total, j.TotalRows)
		g(c.sorted, j.SortedBytes)
		g(c.spilled, j.SpilledBytes)
		g(c.ingested, j.IngestedBytes)
	}
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(n))
}
