package backend

import "time"

// BinlogReporter is an optional interface of a Backend that may keep a binlog (the memory store
// with -b): what the ops listener's metrics export about it. It names no metrics library, so
// that backends stay free of one.
type BinlogReporter interface {
	// BinlogFigures reports the binlog's figures now; ok is false when the store keeps none.
	BinlogFigures() (f BinlogFigures, ok bool)
	// ObserveBinlogSyncs has f called with the duration of every fsync round of the binlog
	// from now on (failed ones included); nothing happens without a binlog.
	ObserveBinlogSyncs(f func(time.Duration))
}

// BinlogFigures describe a binlog for the metrics.
type BinlogFigures struct {
	Files          int    // binlog.N files held: those with records and those made ahead
	DiskBytes      int64  // their size on disk, preallocated space included
	LiveBytes      int64  // the live jobs' latest full records
	WrittenBytes   uint64 // bytes of records written since the store was opened
	RecordsWritten uint64 // records written since the store was opened
	WriteErrors    uint64 // writes that failed, and room or files that could not be made
	SyncErrors     uint64 // fsyncs that failed
}
