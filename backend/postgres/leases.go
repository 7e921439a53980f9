package postgres

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// leases are the gateway processes this Backend has begun sessions for; it renews their
// heartbeat rows so that other gateways do not end their sessions. It also keeps the heartbeat's
// memory: which other processes are suspected dead, and which sessions still need ending.
type leases struct {
	mu        sync.Mutex
	processes map[string]struct{}
	// suspects are other processes whose lease this Backend saw expired, with the local
	// (monotonic) time of the first sight; see reapDeadProcesses.
	suspects map[string]time.Time
	// unended are sessions whose EndSession failed; every heartbeat ends them again.
	unended map[string]struct{}
}

func newLeases() *leases {
	return &leases{processes: map[string]struct{}{}, suspects: map[string]time.Time{}, unended: map[string]struct{}{}}
}

// add records process, reporting whether it is new.
func (l *leases) add(process string) bool { return l.insert(l.processes, process) }

func (l *leases) list() []string { return l.keys(l.processes) }

// insert adds k to one of the sets, reporting whether it is new.
func (l *leases) insert(set map[string]struct{}, k string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := set[k]; ok {
		return false
	}
	set[k] = struct{}{}
	return true
}

// keys copies one of the sets, never as nil: the statements take it as an array, and pgx
// sends a nil slice as NULL, with which "<> ALL" matches nothing.
func (l *leases) keys(set map[string]struct{}) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.AppendSeq(make([]string, 0, len(set)), maps.Keys(set))
}

// confirmed returns the suspects first seen expired at least grace before now, except this
// Backend's own processes.
func (l *leases) confirmed(now time.Time, grace time.Duration) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for p, since := range l.suspects {
		if _, own := l.processes[p]; !own && now.Sub(since) >= grace {
			out = append(out, p)
		}
	}
	return out
}

// suspect makes expired the suspects: one already suspected keeps its first sight, a new one is
// first seen at now, and any other suspect is cleared (its lease was renewed, or it was reaped).
func (l *leases) suspect(now time.Time, expired []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.suspects {
		if !slices.Contains(expired, p) {
			delete(l.suspects, p)
		}
	}
	for _, p := range expired {
		if _, ok := l.suspects[p]; !ok {
			l.suspects[p] = now
		}
	}
}

// clearSuspects forgets every suspicion after a failed call: an expired lease seen before an
// outage says nothing about the process after it, so it must be seen anew and outlive a grace.
func (l *leases) clearSuspects() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.suspects)
}

// addUnended records a session whose end failed, reporting whether it is new.
func (l *leases) addUnended(session string) bool { return l.insert(l.unended, session) }

func (l *leases) unendedList() []string { return l.keys(l.unended) }

func (l *leases) removeUnended(sessions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range sessions {
		delete(l.unended, s)
	}
}

// reapGrace is how long another process's lease must stay expired, as seen by this Backend,
// before its sessions are ended. It is longer than the heartbeat period (LeaseTTL/3), so a live
// gateway whose lease expired during a database outage renews it within the grace once the
// database is back.
func (b *Backend) reapGrace() time.Duration { return b.opts.LeaseTTL / 2 }

// renewLeases renews this Backend's leases every LeaseTTL/3, on a connection of its own, in a
// transaction that does not wait for the WAL flush nor a synchronous standby
// (renew_leases.sql): nothing else this Backend does can hold a renewal back, neither a pool
// full of commits waiting for a standby nor a slow heartbeat chore, so a live gateway is never
// taken for dead because its own store was slow. Leases are judged by the database's clock. A
// renewal that fails closes the connection (it may lead to a server that is gone) and the next
// tick dials again, which finds the primary of a multi-host URL anew.
func (b *Backend) renewLeases() {
	defer b.wg.Done()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	b.every(b.opts.LeaseTTL/3, func() {
		ps := b.leases.list()
		if len(ps) == 0 {
			return
		}
		// A renewal may take up to half a lease (ticks meanwhile are dropped): later than that,
		// the lease would be at risk anyway, and the next tick tries again.
		ctx, cancel := context.WithTimeout(context.Background(), min(b.opts.LeaseTTL/2, b.opts.CommandTimeout))
		var err error
		if conn == nil {
			conn, err = pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig.Copy())
		}
		if err == nil {
			_, err = conn.Exec(ctx, b.st.get("renew_leases"), ps, b.opts.LeaseTTL.Microseconds())
		}
		cancel()
		if err != nil {
			if conn != nil {
				_ = conn.Close(context.Background())
				conn = nil
			}
			if !b.renewFailed.Swap(true) {
				b.opts.Logger.Warn("postgres: renewing gateway leases failed", "err", err)
			}
			return
		}
		if b.renewFailed.Swap(false) {
			b.opts.Logger.Info("postgres: gateway leases renewed again")
		}
	})
}

// heartbeat ends again, every LeaseTTL/3, the sessions whose end failed, and ends the sessions
// of processes whose lease ran out, so that a crashed gateway's reservations come back within
// about two leases rather than a TTR. Every Backend does this; the process rows are locked SKIP
// LOCKED, so two gateways never end the same dead sessions twice. While this Backend cannot
// renew its own leases it reaps nobody: it cannot tell others' expiry from its own trouble.
//
// Worst case after a kill -9, from the dead gateway's last renewal: the lease (LeaseTTL), up to a
// tick until another gateway first sees it expired (LeaseTTL/3), then the grace (LeaseTTL/2)
// rounded up to whole ticks (2 × LeaseTTL/3): 2 × LeaseTTL, 10 s with the default lease.
func (b *Backend) heartbeat() {
	defer b.wg.Done()
	b.every(b.opts.LeaseTTL/3, func() {
		ctx := context.Background()
		if b.renewFailed.Load() {
			b.leases.clearSuspects()
			return
		}
		if err := b.retryEndSessions(ctx); err != nil {
			b.leases.clearSuspects()
			return
		}
		if err := b.reapDeadProcesses(ctx); err != nil {
			b.failures.Background.Failed("postgres: ending sessions of dead gateways failed", err)
		}
		// The timeout counts appended since the last beat go into the counters row, so that
		// stats sums a handful of rows (005_lock_free_timeouts). Holding no job row, it cannot
		// deadlock with the statements that append them.
		if err := b.run(ctx, "fold timeouts", func(ctx context.Context) error {
			_, err := b.pool.Exec(ctx, b.st.get("fold_timeouts"))
			return err
		}); err != nil {
			b.failures.Background.Failed("postgres: folding the timeout counts failed", err)
		}
	})
}

// every runs f every d until Close.
func (b *Backend) every(d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
			f()
		}
	}
}

// retryEndSessions ends, together, the sessions whose EndSession failed. Until it succeeds they
// stay under this (live) process, where no other gateway's reaper would end them.
func (b *Backend) retryEndSessions(ctx context.Context) error {
	pending := b.leases.unendedList()
	if len(pending) == 0 {
		return nil
	}
	if err := b.endSessions(ctx, pending); err != nil {
		return err
	}
	b.leases.removeUnended(pending)
	b.opts.Logger.Info("postgres: ended sessions on retry", "sessions", len(pending))
	return nil
}

// reapDeadProcesses ends, in one transaction, every session of the processes whose lease ran out
// at least a grace ago as far as this Backend has seen, forgets those processes, and records the
// processes now seen expired as suspects. A first sight only suspects, because after a database
// outage longer than the lease every live gateway's lease has expired too; each renews its own
// within a heartbeat period, well inside the grace. A process this Backend heartbeats is alive
// by definition, even if an overloaded moment let its lease lapse. A failed call clears every
// suspicion.
func (b *Backend) reapDeadProcesses(ctx context.Context) error {
	var (
		back     handedJobs
		expired  []string
		gateways int // dead processes whose sessions were ended, and those sessions
		ended    int
	)
	now := time.Now()
	confirmed := b.leases.confirmed(now, b.reapGrace())
	own := b.leases.list()
	err := b.run(ctx, "reap dead gateways", func(ctx context.Context) error {
		back, expired, gateways, ended = handedJobs{}, nil, 0, 0
		return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			var locked, sessions []string
			if len(confirmed) > 0 {
				rows, err := tx.Query(ctx, b.st.get("dead_sessions"), confirmed)
				if err != nil {
					return err
				}
				var process string
				var session *string
				if _, err := pgx.ForEachRow(rows, []any{&process, &session}, func() error {
					if !slices.Contains(locked, process) {
						locked = append(locked, process)
					}
					if session != nil {
						sessions = append(sessions, *session)
					}
					return nil
				}); err != nil {
					return err
				}
			}
			if len(sessions) > 0 {
				if err := back.scan(tx.QueryRow(ctx, b.st.get("end_sessions"), b.now(), sessions)); err != nil {
					return err
				}
			}
			rows, err := tx.Query(ctx, b.st.get("forget_dead_processes"), locked, own)
			if err != nil {
				return err
			}
			if expired, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return err
			}
			if len(sessions) > 0 {
				// Last: gc_tubes holds its lock to the commit (see 009_gc_tubes_without_waits).
				_, err = tx.Exec(ctx, b.st.get("gc_tubes"), nil)
			}
			gateways, ended = len(locked), len(sessions)
			return err
		})
	})
	if err != nil {
		b.leases.clearSuspects()
		return err
	}
	b.leases.suspect(now, expired)
	b.waiters.handOut(back)
	if ended > 0 {
		b.opts.Logger.Info("postgres: ended sessions of dead gateways", "gateways", gateways, "sessions", ended)
	}
	return nil
}
