package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Statements that lock several rows take them in one order — job rows (by id), then tube rows
// (by name), then the counters row — so that no two wait for each other: such a deadlock lasts
// until PostgreSQL's deadlock_timeout (1 s) breaks it, and every command queued behind it stalls
// that long (a write batch stalls every put and delete of its gateway). Here tube a's row is held
// by another transaction while each statement runs: waiting for it, the statement must hold
// nothing that comes after it in that order (tube b, counters), whatever order its plan visits
// the rows in: tube b is created before a, so that a scan of the tubes table meets b first.
func TestWaitingForATubeHoldsNothingAfterIt(t *testing.T) {
	ctx := testCtx(t)
	const bigID = int64(1) << 40 // import: ids no put hands out
	tests := []struct {
		name string
		// policy, if set, governs both tubes before their jobs are put; a statement with no
		// variant without policies runs only with them.
		policy *backend.Policy
		// run runs the statement in tx, on tubes a and b (ids: a job of each).
		run func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, ids []int64) error
	}{
		{"put", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, _ []int64) error {
			_, err := tx.Exec(ctx, b.variant("put", policies), b.now(), []string{"b", "a"}, []int64{0, 0},
				[]int64{0, 0}, []int64{60e6, 60e6}, [][]byte{[]byte("x"), []byte("y")}, []string{},
				[]*string{nil, nil}, []*string{nil, nil}) // no waiting reserve to hand them to
			return err
		}},
		{"delete", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, ids []int64) error {
			_, err := tx.Exec(ctx, b.variant("delete", policies), b.now(), ids, []string{"lockorder.1", "lockorder.1"})
			return err
		}},
		{"import", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, _ []int64) error {
			i32 := []int32{0, 0}
			i64 := []int64{0, 0}
			_, err := tx.Exec(ctx, b.variant("import", policies), b.now(), []string{"k1", "k2"},
				[]int64{bigID, bigID + 1}, []string{"b", "a"}, []int16{1, 1}, i64, []int64{60e6, 60e6}, i64,
				i64, i64, i32, i32, i32, i32, i32, [][]byte{[]byte("x"), []byte("y")})
			return err
		}},
		{"tick_expire", &backend.Policy{Tube: "*", ExpireAfter: time.Hour},
			func(ctx context.Context, b *Backend, tx pgx.Tx, _ bool, _ []int64) error {
				// Two hours on: both jobs have expired, and are deleted.
				_, err := tx.Exec(ctx, b.st.get("tick_expire"), time.Now().Add(2*time.Hour))
				return err
			}},
	}
	for _, tt := range tests {
		for _, policies := range []bool{false, true} {
			if tt.policy != nil && !policies {
				continue
			}
			t.Run(fmt.Sprintf("%s/policies=%v", tt.name, policies), func(t *testing.T) {
				b := newTestBackend(t, nil)
				schema := pgx.Identifier{b.opts.Schema}.Sanitize()
				if tt.policy != nil {
					require.NoError(t, b.SetPolicy(ctx, *tt.policy))
				}
				var ids []int64
				for _, tube := range []string{"b", "a"} {
					id, err := b.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("x")})
					require.NoError(t, err)
					ids = append(ids, int64(id))
				}

				holder, err := b.pool.Begin(ctx)
				require.NoError(t, err)
				defer func() { _ = holder.Rollback(ctx) }()
				_, err = holder.Exec(ctx, "SELECT 1 FROM "+schema+".tubes WHERE name = 'a' FOR UPDATE")
				require.NoError(t, err)

				conn, err := b.pool.Acquire(ctx)
				require.NoError(t, err)
				defer conn.Release()
				pid := conn.Conn().PgConn().PID()
				done := make(chan error, 1)
				go func() {
					tx, err := conn.Begin(ctx)
					if err == nil {
						err = tt.run(ctx, b, tx, policies, ids)
					}
					if err == nil {
						err = tx.Commit(ctx)
					}
					done <- err
				}()
				require.Eventually(t, func() bool {
					var waiting bool
					err := b.pool.QueryRow(ctx, "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&waiting)
					return err == nil && waiting
				}, 5*time.Second, 5*time.Millisecond, "the statement never waited for tube a")

				for _, probe := range []string{
					"SELECT 1 FROM " + schema + ".tubes WHERE name = 'b' FOR UPDATE NOWAIT",
					"SELECT 1 FROM " + schema + ".counters WHERE id = 1 FOR UPDATE NOWAIT",
				} {
					tx, err := b.pool.Begin(ctx)
					require.NoError(t, err)
					_, err = tx.Exec(ctx, probe)
					_ = tx.Rollback(ctx)
					var pgErr *pgconn.PgError
					if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
						t.Errorf("waiting for tube a, it holds what comes after it: %s", probe)
						continue
					}
					require.NoError(t, err)
				}
				require.NoError(t, holder.Rollback(ctx))
				require.NoError(t, <-done)
			})
		}
	}
}
