package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// leases are the gateway processes this Backend has begun sessions for; it renews their
// heartbeat rows so that other gateways do not end their sessions.
type leases struct {
	mu        sync.Mutex
	processes map[string]struct{}
}

func newLeases() *leases { return &leases{processes: map[string]struct{}{}} }

// add records process, reporting whether it is new.
func (l *leases) add(process string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.processes[process]; ok {
		return false
	}
	l.processes[process] = struct{}{}
	return true
}

func (l *leases) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.processes))
	for p := range l.processes {
		out = append(out, p)
	}
	return out
}

// heartbeat renews this Backend's leases every LeaseTTL/3 and ends the sessions of processes
// whose lease ran out, so that a crashed gateway's reservations come back within about a lease
// rather than a TTR. Every Backend does this; the process rows are locked SKIP LOCKED, so two
// gateways never end the same dead sessions twice.
func (b *Backend) heartbeat() {
	defer b.wg.Done()
	tick := time.NewTicker(b.opts.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		}
		ctx := context.Background()
		if ps := b.leases.list(); len(ps) > 0 {
			err := b.run(ctx, "renew leases", func(ctx context.Context) error {
				_, err := b.pool.Exec(ctx, b.st.get("renew_leases"), ps, b.opts.LeaseTTL.Microseconds())
				return err
			})
			if err != nil {
				b.opts.Logger.Warn("postgres: renewing gateway leases failed", "err", err)
			}
		}
		if err := b.reapDeadProcesses(ctx); err != nil {
			b.opts.Logger.Warn("postgres: ending sessions of dead gateways failed", "err", err)
		}
	}
}

// reapDeadProcesses ends, in one transaction, every session of processes whose lease ran out and
// forgets those processes. A process this Backend heartbeats is alive by definition, even if an
// overloaded moment let its lease lapse.
func (b *Backend) reapDeadProcesses(ctx context.Context) error {
	var tubes []string
	own := b.leases.list()
	err := b.run(ctx, "reap dead gateways", func(ctx context.Context) error {
		tubes = nil
		return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, b.st.get("dead_sessions"), own)
			if err != nil {
				return err
			}
			sessions, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			if len(sessions) > 0 {
				if _, err := tx.Exec(ctx, b.st.get("promote"), b.now()); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, b.st.get("end_sessions"), sessions).Scan(&tubes); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, b.st.get("gc_tubes"), nil); err != nil {
					return err
				}
			}
			_, err = tx.Exec(ctx, b.st.get("forget_dead_processes"), own)
			return err
		})
	})
	for _, t := range tubes {
		b.waiters.wake(t, 1) // one entry per returned job
	}
	return err
}
