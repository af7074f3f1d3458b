package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reorgdb/reorgdb/kv"
)

// pebbleCollector exports a few Pebble metrics on each scrape.
type pebbleCollector struct {
	store *kv.Store
	descs map[string]*prometheus.Desc
	kinds *prometheus.Desc
}

func newPebbleCollector(store *kv.Store) *pebbleCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("reorgdb_pebble_"+name, help, nil, nil)
	}
	return &pebbleCollector{store: store, descs: map[string]*prometheus.Desc{
		"disk_bytes":     d("disk_usage_bytes", "Bytes of disk used by the store."),
		"memtable_bytes": d("memtable_bytes", "Bytes in memtables."),
		"l0_files":       d("l0_files", "Files in level 0."),
		"compactions":    d("compactions_total", "Compactions completed."),
		"flushes":        d("flushes_total", "Memtable flushes completed."),
		"cache_hits":     d("block_cache_hits_total", "Block cache hits."),
		"cache_misses":   d("block_cache_misses_total", "Block cache misses."),
		"wal_bytes":      d("wal_bytes_written_total", "Bytes written to the WAL."),
		"read_amp":       d("read_amplification", "Read amplification of the LSM."),
	}, kinds: prometheus.NewDesc("reorgdb_pebble_compactions_by_kind_total",
		"Compactions completed, by kind (default, read-triggered, move, delete-only, ...).", []string{"kind"}, nil)}
}

func (c *pebbleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	ch <- c.kinds
}

func (c *pebbleCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.store.DB().Metrics()
	g := func(k string, v float64) { ch <- prometheus.MustNewConstMetric(c.descs[k], prometheus.GaugeValue, v) }
	cnt := func(k string, v float64) { ch <- prometheus.MustNewConstMetric(c.descs[k], prometheus.CounterValue, v) }
	g("disk_bytes", float64(m.DiskSpaceUsage()))
	g("memtable_bytes", float64(m.MemTable.Size))
	g("l0_files", float64(m.Levels[0].TablesCount))
	cnt("compactions", float64(m.Compact.Count))
	cnt("flushes", float64(m.Flush.Count))
	cnt("cache_hits", float64(m.BlockCache.Hits))
	cnt("cache_misses", float64(m.BlockCache.Misses))
	cnt("wal_bytes", float64(m.WAL.BytesWritten))
	g("read_amp", float64(m.ReadAmp()))
	for kind, n := range map[string]int64{"default": m.Compact.DefaultCount, "read": m.Compact.ReadCount,
		"move": m.Compact.MoveCount, "delete_only": m.Compact.DeleteOnlyCount, "elision_only": m.Compact.ElisionOnlyCount,
		"tombstone_density": m.Compact.TombstoneDensityCount, "rewrite": m.Compact.RewriteCount,
		"copy": m.Compact.CopyCount, "multi_level": m.Compact.MultiLevelCount} {
		ch <- prometheus.MustNewConstMetric(c.kinds, prometheus.CounterValue, float64(n), kind)
	}
}
