package postgres

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestReserveCostDoesNotGrowWithTheQueue: a reserve reads about the same number of pages with a
// hundred thousand jobs queued as with a thousand, whatever state they are in: every branch of
// reserve_many is an index lookup (O(log n)), none a scan of the queue. Ready jobs are the hit
// path; delayed (not yet due), reserved (not yet expired) and buried jobs the miss path, which
// also looks up what to wait for. Pages, not time: they do not depend on the machine's load.
// (Not covered, and known to grow: many delayed jobs or reservations that came due together and
// have not been promoted yet; see docs/benchmarks-postgres.md, "What is left".)
func TestReserveCostDoesNotGrowWithTheQueue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// columns state, due_at, reserved_by, buried_seq of the queued jobs, as SQL
		state, due, reservedBy, buriedSeq string
	}{
		{"Ready", "1", "NULL", "NULL", "NULL"},
		{"DelayedNotYetDue", "2", "now() + interval '1 hour'", "NULL", "NULL"},
		{"ReservedNotYetExpired", "3", "now() + interval '1 hour'", "'other.1'", "NULL"},
		{"Buried", "4", "NULL", "NULL", "nextval('%s.buried_seq')"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			schema := testSchema(t)
			b := newTestBackend(t, nil, schema)
			q := pgx.Identifier{schema}.Sanitize()
			buriedSeq := c.buriedSeq
			if buriedSeq != "NULL" {
				buriedSeq = fmt.Sprintf(buriedSeq, q)
			}
			fill := func(n int) {
				_, err := admin(t).Exec(ctx, "INSERT INTO "+q+".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, reserved_by, buried_seq, body) "+
					"SELECT nextval('"+q+".job_ids'), 'default', "+c.state+", (random() * 1000)::int, 0, 60000000, now(), "+
					c.due+", "+c.reservedBy+", "+buriedSeq+", 'x' FROM generate_series(1, $1)", n)
				require.NoError(t, err)
			}
			// pages is the most pages any node of the reserve's plan read, measured with
			// EXPLAIN ANALYZE on one of the backend's own connections (its planner settings) in
			// a transaction rolled back, so the queue stays as it is.
			pages := func() int {
				conn, err := b.pool.Acquire(ctx)
				require.NoError(t, err)
				defer conn.Release()
				tx, err := conn.Begin(ctx)
				require.NoError(t, err)
				defer func() { _ = tx.Rollback(ctx) }()
				var out []byte
				require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+b.st.get("reserve_many"),
					nil, []string{"default"}, []string{"cost.1"}).Scan(&out))
				var plan []struct{ Plan map[string]any }
				require.NoError(t, json.Unmarshal(out, &plan))
				var most func(n map[string]any) int
				most = func(n map[string]any) int {
					m := int(n["Shared Hit Blocks"].(float64) + n["Shared Read Blocks"].(float64))
					children, _ := n["Plans"].([]any)
					for _, child := range children {
						m = max(m, most(child.(map[string]any)))
					}
					return m
				}
				return most(plan[0].Plan)
			}
			fill(1000)
			small := pages()
			fill(99000)
			large := pages()
			t.Logf("pages read by a reserve: %d with 1,000 jobs, %d with 100,000", small, large)
			// An index descent is one page deeper at most; a scan would read hundreds more.
			require.LessOrEqual(t, large, 2*small+16)
		})
	}
}
