package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend"
)

// listStatements are the statements of ListJobs, one per state, each an index range.
var listStatements = map[backend.State]string{
	backend.Ready:    "list_ready",
	backend.Delayed:  "list_delayed",
	backend.Reserved: "list_reserved",
	backend.Buried:   "list_buried",
}

// beforeEverything is the cursor time of a first page: no due time or deadline is earlier.
var beforeEverything = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)

// ListJobs lists a page of tube's jobs in one state (sql/list_*.sql). A cursor is the last job's
// key (priority, due time in µs, or bury sequence) and its id.
func (b *Backend) ListJobs(ctx context.Context, p backend.ListParams) (*backend.JobPage, error) {
	stmt, ok := listStatements[p.State]
	if !ok {
		return nil, backend.ErrBadCursor
	}
	var key, id int64 = -1, 0
	if p.State == backend.Buried {
		key = 0
	}
	if p.After != "" {
		k, i, err := backend.DecodeCursor(p.After, p.State)
		if err != nil {
			return nil, err
		}
		key, id = k, int64(i)
	}
	var keyArg any = key
	if p.State == backend.Delayed || p.State == backend.Reserved {
		keyArg = beforeEverything
		if p.After != "" {
			keyArg = time.UnixMicro(key)
		}
	}
	limit := backend.ClampLimit(p.Limit, backend.MaxListLimit)
	var (
		page   *backend.JobPage
		exists bool
	)
	err := b.run(ctx, "list-jobs", func(ctx context.Context) error {
		page, exists = &backend.JobPage{}, false
		var lastKey int64
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("tube_exists"), p.Tube).QueryRow(func(row pgx.Row) error {
			return row.Scan(&exists)
		})
		bt.Queue(b.st.get(stmt), b.now(), p.Tube, keyArg, id, int64(limit+1), max(p.BodyBytes, 0)).Query(func(rows pgx.Rows) error {
			var (
				jid, prio, delayUS, ttrUS, sortKey          int64
				state                                       int16
				tube                                        string
				created, now                                time.Time
				due                                         *time.Time
				reserves, timeouts, releases, buries, kicks int32
				size                                        int32
				body                                        []byte
			)
			_, err := pgx.ForEachRow(rows, []any{&jid, &tube, &state, &prio, &created, &delayUS, &ttrUS, &due,
				&reserves, &timeouts, &releases, &buries, &kicks, &now, &size, &body, &sortKey}, func() error {
				if len(page.Jobs) == limit {
					page.Next = backend.EncodeCursor(p.State, lastKey, page.Jobs[limit-1].ID)
					return nil
				}
				js := backend.JobStats{
					ID: uint64(jid), Tube: tube, State: backend.State(state), Priority: uint32(prio),
					Age: now.Sub(created), Delay: time.Duration(delayUS) * time.Microsecond,
					TTR:      time.Duration(ttrUS) * time.Microsecond,
					Reserves: uint32(reserves), Timeouts: uint32(timeouts), Releases: uint32(releases),
					Buries: uint32(buries), Kicks: uint32(kicks),
				}
				if due != nil {
					js.TimeLeft = max(due.Sub(now), 0)
				}
				lastKey = sortKey
				page.Jobs = append(page.Jobs, backend.ListedJob{JobStats: js, BodySize: int(size), Body: append([]byte(nil), body...)})
				return nil
			})
			return err
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, backend.ErrNotFound
	}
	return page, nil
}

// DeleteJobs deletes up to limit of tube's jobs in state (sql/delete_jobs.sql). Before a flush
// of ready jobs, a bounded batch of the tube's due delayed jobs and expired reservations is
// promoted (its own transaction, as a reserve does), so that they are deleted as the ready jobs
// they are.
func (b *Backend) DeleteJobs(ctx context.Context, tube string, state backend.State, limit int) (int, error) {
	if !bulkState(state) {
		return 0, nil
	}
	if err := b.promoteForBulk(ctx, tube, state); err != nil {
		return 0, err
	}
	var (
		n            int64
		unreferenced bool
	)
	err := b.run(ctx, "delete-jobs", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("delete_jobs"), b.now(), tube, int(state), int64(backend.ClampLimit(limit, backend.MaxBulkLimit))).QueryRow(func(row pgx.Row) error {
			return row.Scan(&n, &unreferenced)
		})
		return b.batch(ctx, bt)
	})
	if err == nil && unreferenced {
		err = opErr("delete-jobs", b.gcTubes(ctx, []string{tube}))
	}
	return int(n), err
}

// MoveJobs moves up to limit of from's jobs in state to to (sql/move_jobs.sql), promoting first
// as DeleteJobs does; this gateway's waiters on to are woken, the others' through the
// notification.
func (b *Backend) MoveJobs(ctx context.Context, from, to string, state backend.State, limit int) (int, error) {
	if !bulkState(state) || from == to {
		return 0, nil
	}
	if err := b.promoteForBulk(ctx, from, state); err != nil {
		return 0, err
	}
	var (
		n, notified  int64
		unreferenced bool
	)
	err := b.run(ctx, "move-jobs", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.stmt("move_jobs"), b.now(), from, to, int(state), int64(backend.ClampLimit(limit, backend.MaxBulkLimit))).QueryRow(func(row pgx.Row) error {
			return row.Scan(&n, &unreferenced, &notified)
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return 0, err
	}
	if n > 0 && b.policiesActive() {
		b.tickAt(time.Time{}) // the moved jobs' expiry, if any, is the tick's to find
	}
	switch {
	case n > 0 && state == backend.Ready:
		b.waiters.wake(to, int(n))
	case n > 0 && state == backend.Delayed:
		b.waiters.wake(to, 0) // they look at the due times again
	}
	if unreferenced {
		err = opErr("move-jobs", b.gcTubes(ctx, []string{from}))
	}
	return int(n), err
}

func bulkState(s backend.State) bool {
	return s == backend.Ready || s == backend.Delayed || s == backend.Buried
}

// promoteForBulk makes a bounded batch of tube's due jobs ready before a bulk operation on ready
// or delayed jobs (promote_tubes.sql), so that each is acted on in the state it is really in.
func (b *Backend) promoteForBulk(ctx context.Context, tube string, state backend.State) error {
	if state == backend.Buried {
		return nil
	}
	return b.run(ctx, "promote", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("promote_tubes"), b.now(), []string{tube}, []string{})
		return b.batch(ctx, bt)
	})
}
