package postgres

import (
	"context"
	"errors"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// BeginSession registers s (using and watching default) and starts heartbeats for its process.
func (b *Backend) BeginSession(ctx context.Context, s backend.SessionID, info backend.SessionInfo) error {
	process := s.Process()
	first := b.leases.add(process)
	return b.run(ctx, "begin session", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		if first {
			// The lease must exist before the session, or another gateway could see a session
			// without a live process.
			bt.Queue(b.st.get("renew_leases"), []string{process}, b.opts.LeaseTTL.Microseconds())
		}
		bt.Queue(b.st.get("begin_session"), string(s), process, info.Addr)
		return b.batch(ctx, bt)
	})
}

// EndSession returns s's reserved jobs to ready and drops its tube references.
//
// If that fails (the database down or slow as the connection closes), the error is returned and
// the heartbeat ends s again on every tick until it succeeds or the Backend closes: s stays
// under this live process meanwhile, so no other gateway's reaper would end it, and its
// reservations would wait for their TTR. Ending a session again is harmless (end_sessions finds
// nothing left of it), also when the failed attempt was committed after all.
func (b *Backend) EndSession(ctx context.Context, s backend.SessionID) error {
	b.empty.holdsNone(string(s)) // it reserves nothing more, whatever the outcome
	err := b.endSessions(ctx, []string{string(s)})
	if err != nil && !errors.Is(err, errClosed) && b.leases.addUnended(string(s)) {
		b.failures.SessionEnds.Failed("postgres: ending a session failed; retrying on every heartbeat", err, "session", s)
	}
	return err
}

func (b *Backend) endSessions(ctx context.Context, sessions []string) error {
	var back handedJobs
	err := b.run(ctx, "end session", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.stmt("end_sessions"), b.now(), sessions).QueryRow(back.scan)
		bt.Queue(b.st.get("gc_tubes"), nil)
		return b.batch(ctx, bt)
	})
	if err == nil {
		b.waiters.handOut(back)
		b.cameBack("")
	}
	return err
}

// handedJobs are jobs made ready that go to this gateway's waiting reserves first, in order: a
// closing session's reservations in the order they were reserved (end_sessions.sql), the first
// jobs of a kick in the order they moved (kick.sql).
type handedJobs struct {
	ids    []int64
	tubes  []string
	paused []bool // the job's tube is paused: no waiting reserve may take it
}

func (r *handedJobs) scan(row pgx.Row) error {
	return row.Scan(&r.ids, &r.tubes, &r.paused)
}

// UseTube makes tube s's used tube.
func (b *Backend) UseTube(ctx context.Context, s backend.SessionID, tube string) error {
	return b.tubeRef(ctx, "use", "use_tube", s, tube, nil) // the previous tube is known only to SQL
}

// WatchTube adds tube to s's watch list.
func (b *Backend) WatchTube(ctx context.Context, s backend.SessionID, tube string) error {
	return b.run(ctx, "watch", func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, b.st.get("watch_tube"), string(s), tube) // drops no reference
		return err
	})
}

// IgnoreTube removes tube from s's watch list.
func (b *Backend) IgnoreTube(ctx context.Context, s backend.SessionID, tube string) error {
	return b.tubeRef(ctx, "ignore", "ignore_tube", s, tube, []string{tube})
}

// tubeRef runs a statement that drops one of a session's tube references, then collects the
// tubes gc names (nil: any) if left unreferenced, in one transaction.
func (b *Backend) tubeRef(ctx context.Context, op, stmt string, s backend.SessionID, tube string, gc []string) error {
	return b.run(ctx, op, func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.st.get(stmt), string(s), tube)
		bt.Queue(b.st.get("gc_tubes"), gc)
		return b.batch(ctx, bt)
	})
}
