package memory

import (
	"time"

	"github.com/beangate/beangate/backend"
)

// BinlogFigures reports the binlog's figures; none without a binlog.
func (b *Backend) BinlogFigures() (backend.BinlogFigures, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wal == nil {
		return backend.BinlogFigures{}, false
	}
	ws := b.wal.Stats()
	return backend.BinlogFigures{
		Files:          ws.Files,
		DiskBytes:      ws.DiskBytes,
		LiveBytes:      ws.LiveBytes,
		WrittenBytes:   ws.Bytes,
		RecordsWritten: ws.RecordsWritten,
		WriteErrors:    ws.WriteErrors,
		SyncErrors:     ws.SyncErrors,
	}, true
}

// ObserveBinlogSyncs has f observe the binlog's fsync rounds.
func (b *Backend) ObserveBinlogSyncs(f func(time.Duration)) {
	if b.wal != nil { // set once by Open, before the backend is shared
		b.wal.ObserveSyncs(f)
	}
}
