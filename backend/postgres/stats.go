package postgres

import (
	"context"
	"math"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// JobStats describes job id, with time applied as it is read (job_stats.sql).
func (b *Backend) JobStats(ctx context.Context, id uint64) (*backend.JobStats, error) {
	if id > math.MaxInt64 {
		return nil, backend.ErrNotFound
	}
	var js *backend.JobStats
	err := b.run(ctx, "stats-job", func(ctx context.Context) error {
		js = nil
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("job_stats"), b.now(), int64(id)).Query(func(rows pgx.Rows) error {
			var (
				jid, prio, delayUS, ttrUS                   int64
				state                                       int16
				tube                                        string
				created, now                                time.Time
				due                                         *time.Time
				reserves, timeouts, releases, buries, kicks int32
			)
			_, err := pgx.ForEachRow(rows, []any{&jid, &tube, &state, &prio, &created, &delayUS, &ttrUS, &due,
				&reserves, &timeouts, &releases, &buries, &kicks, &now}, func() error {
				js = &backend.JobStats{
					ID: uint64(jid), Tube: tube, State: backend.State(state), Priority: uint32(prio),
					Age: now.Sub(created), Delay: time.Duration(delayUS) * time.Microsecond,
					TTR:      time.Duration(ttrUS) * time.Microsecond,
					Reserves: uint32(reserves), Timeouts: uint32(timeouts), Releases: uint32(releases),
					Buries: uint32(buries), Kicks: uint32(kicks),
				}
				if due != nil && (js.State == backend.Reserved || js.State == backend.Delayed) {
					js.TimeLeft = max(due.Sub(now), 0)
				}
				return nil
			})
			return err
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return nil, err
	}
	if js == nil {
		return nil, backend.ErrNotFound
	}
	return js, nil
}

// TubeStats describes tube if it exists.
func (b *Backend) TubeStats(ctx context.Context, tube string) (*backend.TubeStats, error) {
	var ts *backend.TubeStats
	err := b.run(ctx, "stats-tube", func(ctx context.Context) error {
		ts = nil
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("tube_stats"), b.now(), tube).Query(func(rows pgx.Rows) error {
			var (
				name                                            string
				urgent, ready, reserved, delayed, buried, total int64
				using, watching, cmdDelete, cmdPause, pauseUS   int64
				pauseUntil                                      *time.Time
				now                                             time.Time
			)
			_, err := pgx.ForEachRow(rows, []any{&name, &urgent, &ready, &reserved, &delayed, &buried, &total,
				&using, &watching, &cmdDelete, &cmdPause, &pauseUS, &pauseUntil, &now}, func() error {
				ts = &backend.TubeStats{
					Name: name, UrgentJobs: uint64(urgent), ReadyJobs: uint64(ready), ReservedJobs: uint64(reserved),
					DelayedJobs: uint64(delayed), BuriedJobs: uint64(buried), TotalJobs: uint64(total),
					Using: uint64(using), Watching: uint64(watching), CmdDelete: uint64(cmdDelete),
					CmdPauseTube: uint64(cmdPause),
				}
				if pauseUntil != nil && pauseUntil.After(now) {
					ts.Pause = time.Duration(pauseUS) * time.Microsecond
					ts.PauseTimeLeft = pauseUntil.Sub(now)
				}
				return nil
			})
			return err
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return nil, backend.ErrNotFound
	}
	return ts, nil
}

// Stats returns the store-wide figures.
func (b *Backend) Stats(ctx context.Context) (*backend.Stats, error) {
	var s backend.Stats
	err := b.run(ctx, "stats", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("stats"), b.now()).QueryRow(func(row pgx.Row) error {
			var urgent, ready, reserved, delayed, buried, total, timeouts, tubes int64
			if err := row.Scan(&urgent, &ready, &reserved, &delayed, &buried, &total, &timeouts, &tubes); err != nil {
				return err
			}
			s = backend.Stats{
				UrgentJobs: uint64(urgent), ReadyJobs: uint64(ready), ReservedJobs: uint64(reserved),
				DelayedJobs: uint64(delayed), BuriedJobs: uint64(buried), TotalJobs: uint64(total),
				JobTimeouts: uint64(timeouts), Tubes: uint64(tubes),
			}
			return nil
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// ListTubes names every existing tube.
func (b *Backend) ListTubes(ctx context.Context) ([]string, error) {
	var names []string
	err := b.run(ctx, "list-tubes", func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, b.st.get("list_tubes"))
		if err != nil {
			return err
		}
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return names, err
}

// PauseTube pauses tube for d (0: unpause at once).
func (b *Backend) PauseTube(ctx context.Context, tube string, d time.Duration) error {
	found, announced := false, false // announced: unpaused, or its pause ends sooner than it did
	err := b.run(ctx, "pause-tube", func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, b.st.get("pause_tube"), b.now(), tube, d.Microseconds())
		if err != nil {
			return err
		}
		var name string
		_, err = pgx.ForEachRow(rows, []any{&name, &announced}, func() error { found = true; return nil })
		return err
	})
	if err != nil {
		return err
	}
	if !found {
		return backend.ErrNotFound
	}
	if announced {
		b.waiters.wake(tube, 0)
	}
	return nil
}
