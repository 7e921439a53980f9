package backend

import "time"

// BinlogFigures describe a binlog for the metrics (Admin.BinlogFigures). They name no metrics
// library, so that stores stay free of one.
type BinlogFigures struct {
	Files          int    // binlog.N files held: those with records and those made ahead
	DiskBytes      int64  // their size on disk, preallocated space included
	LiveBytes      int64  // the live jobs' latest full records
	WrittenBytes   uint64 // bytes of records written since the store was opened
	RecordsWritten uint64 // records written since the store was opened
	WriteErrors    uint64 // writes that failed, and room or files that could not be made
	SyncErrors     uint64 // fsyncs that failed
}

// NoBinlog is embedded by a store that never keeps a binlog: it reports no figures and has no
// syncs to observe.
type NoBinlog struct{}

// BinlogFigures reports that there is no binlog.
func (NoBinlog) BinlogFigures() (BinlogFigures, bool) { return BinlogFigures{}, false }

// ObserveBinlogSyncs does nothing: there are no syncs.
func (NoBinlog) ObserveBinlogSyncs(func(time.Duration)) {}
