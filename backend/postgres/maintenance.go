package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// vacuumTables churn the most: every job is inserted, updated two or three times and deleted
// (and every SQL put leaves a dead row of sql_puts).
var vacuumTables = []string{"jobs", "tubes", "counters", "sessions", "session_watches", "processes", "job_timeout_counts", "sql_puts"}

// vacuumLoop vacuums the queue tables every VacuumInterval, on one gateway at a time (an advisory
// lock), so that dead rows and index entries of finished jobs do not pile up when autovacuum is
// off or too slow for a queue's churn; the per-table autovacuum settings of 001_init are the
// first line, this is the backstop. Reserve scans the front of the ready index, which is exactly
// where the dead entries of reserved and deleted jobs collect.
func (b *Backend) vacuumLoop() {
	defer b.wg.Done()
	b.every(b.opts.VacuumInterval, func() {
		if err := b.vacuum(context.Background()); err != nil {
			b.failures.Background.Failed("postgres: vacuum failed", err)
		}
	})
}

func (b *Backend) vacuum(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 4*b.opts.CommandTimeout)
	defer cancel()
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext('beangate.vacuum.' || $1))", b.opts.Schema).Scan(&locked); err != nil {
		return err
	}
	if !locked {
		return nil // another gateway is at it
	}
	defer func() {
		_, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock(hashtext('beangate.vacuum.' || $1))", b.opts.Schema)
	}()
	// One command for every table: each VACUUM command ends by reading all of pg_class (to advance
	// the database's frozen xid), which costs milliseconds of the database's CPU in a catalog that
	// schemas come and go in, once per command.
	names := make([]string, len(vacuumTables))
	for i, table := range vacuumTables {
		names[i] = pgx.Identifier{b.opts.Schema, table}.Sanitize()
	}
	// VACUUM cannot run in a transaction: no arguments, so pgx sends it as a simple query.
	_, err = conn.Exec(ctx, "VACUUM "+strings.Join(names, ", "))
	return err
}
