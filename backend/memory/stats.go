package memory

import (
	"context"
	"time"

	"github.com/beangate/beangate/backend"
)

// JobStats describes job id.
func (b *Backend) JobStats(ctx context.Context, id uint64) (*backend.JobStats, error) {
	now, err := b.begin(ctx, "stats-job")
	if err != nil {
		return nil, err
	}
	defer b.end()
	j := b.jobs.Get(id)
	if j == nil {
		return nil, backend.ErrNotFound
	}
	st := j.stats(now)
	return &st, nil
}

// stats is j's stats-job at now.
func (j *job) stats(now time.Time) backend.JobStats {
	st := backend.JobStats{
		ID:       j.id,
		Tube:     j.tube.name,
		State:    backend.State(j.state),
		Priority: j.priority,
		Age:      now.Sub(timeAt(j.created)),
		Delay:    j.delay,
		TTR:      j.ttr,
		Reserves: j.reserves,
		Timeouts: j.timeouts,
		Releases: j.releases,
		Buries:   j.buries,
		Kicks:    j.kicks,
		File:     j.wal.Num(),
	}
	if j.state == jobReserved || j.state == jobDelayed {
		st.TimeLeft = timeAt(j.at).Sub(now)
	}
	return st
}

// TubeStats describes tube name.
func (b *Backend) TubeStats(ctx context.Context, name string) (*backend.TubeStats, error) {
	now, err := b.begin(ctx, "stats-tube")
	if err != nil {
		return nil, err
	}
	defer b.end()
	t := b.tubes[name]
	if t == nil {
		return nil, backend.ErrNotFound
	}
	st := &backend.TubeStats{
		Name:         t.name,
		UrgentJobs:   t.urgent,
		ReadyJobs:    uint64(t.ready.Len()),
		ReservedJobs: t.reserved,
		DelayedJobs:  uint64(t.delayed.Len()),
		BuriedJobs:   uint64(t.buried.Len()),
		TotalJobs:    t.totalJobs,
		Using:        t.using,
		Watching:     t.watching,
		CmdDelete:    t.cmdDelete,
		CmdPauseTube: t.cmdPauseTube,
	}
	if t.isPaused() {
		st.Pause = t.pause
		st.PauseTimeLeft = t.pauseUntil.Sub(now)
	}
	return st, nil
}

// Stats returns the store-wide figures.
func (b *Backend) Stats(ctx context.Context) (*backend.Stats, error) {
	if _, err := b.begin(ctx, "stats"); err != nil {
		return nil, err
	}
	defer b.end()
	st := &backend.Stats{
		TotalJobs:   b.totalJobs,
		JobTimeouts: b.jobTimeouts,
		Tubes:       uint64(len(b.tubes)),
	}
	if b.wal != nil {
		ws := b.wal.Stats()
		st.Binlog = backend.BinlogStats{
			OldestIndex:     ws.OldestIndex,
			CurrentIndex:    ws.CurrentIndex,
			RecordsMigrated: ws.Migrated,
			RecordsWritten:  ws.RecordsWritten,
			MaxSize:         ws.MaxSize,
			WriteErrors:     ws.WriteErrors + ws.SyncErrors, // binlog-write-errors counts failed fsyncs too
		}
	}
	for _, t := range b.order {
		st.UrgentJobs += t.urgent
		st.ReadyJobs += uint64(t.ready.Len())
		st.ReservedJobs += t.reserved
		st.DelayedJobs += uint64(t.delayed.Len())
		st.BuriedJobs += uint64(t.buried.Len())
	}
	return st, nil
}
