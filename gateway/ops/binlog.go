package ops

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/backend"
)

// binlogCollector exports the figures of the store's binlog (the memory store with -b), read at
// scrape time, and the duration of its fsyncs, observed as they happen.
type binlogCollector struct {
	store backend.Backend
}

var (
	binlogFilesDesc   = desc("beangate_binlog_files", "binlog.N files held: those with records and those made ahead.")
	binlogDiskDesc    = desc("beangate_binlog_disk_bytes", "Size on disk of the binlog files, preallocated space included.")
	binlogLiveDesc    = desc("beangate_binlog_live_bytes", "Bytes of the live jobs' latest full records in the binlog.")
	binlogWrittenDesc = desc("beangate_binlog_written_bytes_total", "Bytes of records written to the binlog since start.")
	binlogRecordsDesc = desc("beangate_binlog_records_written_total", "Records written to the binlog since start (stats binlog-records-written).")
	binlogErrorsDesc  = desc("beangate_binlog_errors_total", "Binlog writes (files or room that could not be made included) and fsyncs that failed, by op; the commands that needed them answered INTERNAL_ERROR or OUT_OF_MEMORY.", "op")
)

// RegisterBinlog registers the binlog metrics on reg when store keeps a binlog, and reports
// whether it does.
func RegisterBinlog(reg prometheus.Registerer, store backend.Backend) bool {
	if _, on := store.BinlogFigures(); !on {
		return false
	}
	syncs := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "beangate_binlog_fsync_duration_seconds",
		Help:    "Time of each binlog fsync round (the files written since the last one, and the directory when files came or went).",
		Buckets: commandBuckets,
	})
	reg.MustRegister(syncs, &binlogCollector{store: store})
	store.ObserveBinlogSyncs(func(d time.Duration) { syncs.Observe(d.Seconds()) })
	return true
}

func (c *binlogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{binlogFilesDesc, binlogDiskDesc, binlogLiveDesc, binlogWrittenDesc, binlogRecordsDesc, binlogErrorsDesc} {
		ch <- d
	}
}

func (c *binlogCollector) Collect(ch chan<- prometheus.Metric) {
	f, ok := c.store.BinlogFigures()
	if !ok {
		return
	}
	metric := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	metric(binlogFilesDesc, prometheus.GaugeValue, float64(f.Files))
	metric(binlogDiskDesc, prometheus.GaugeValue, float64(f.DiskBytes))
	metric(binlogLiveDesc, prometheus.GaugeValue, float64(f.LiveBytes))
	metric(binlogWrittenDesc, prometheus.CounterValue, float64(f.WrittenBytes))
	metric(binlogRecordsDesc, prometheus.CounterValue, float64(f.RecordsWritten))
	metric(binlogErrorsDesc, prometheus.CounterValue, float64(f.WriteErrors), "write")
	metric(binlogErrorsDesc, prometheus.CounterValue, float64(f.SyncErrors), "fsync")
}
