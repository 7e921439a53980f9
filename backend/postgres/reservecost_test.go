package postgres

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestReserveCostDoesNotGrowWithTheQueue: a reserve reads about the same number of pages with a
// hundred thousand jobs queued as with a thousand, whatever state they are in: every branch of
// reserve_many is an index lookup (O(log n)), none a scan of the queue. Ready jobs are the hit
// path; delayed (not yet due), reserved (not yet expired) and buried jobs the miss path, which
// also looks up what to wait for. Pages, not time: they do not depend on the machine's load.
//
// Delayed jobs whose time has come and expired reservations (all the queued jobs, due an hour
// ago: a matured burst of delayed puts, or the reservations of a fleet of dead workers) are
// promoted to ready by the reserve itself, at most a batch (500 per tube) per statement. So
// their first reserve reads pages in proportion to the batch, not to the queue: about the same
// with 1,000 due jobs (all promoted at once) as with 100,000 (the first batch). Every reserve
// pays that until the backlog is promoted (200 reserves for 100,000 jobs); after that, the
// steady state, the queue is ready jobs and a reserve costs what the Ready case does. Both are
// checked. (Before promotion, each of these reserves sorted every due row: ~2,000 pages at
// 100,000, for every reserve while the backlog drained.)
func TestReserveCostDoesNotGrowWithTheQueue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// columns state, due_at, reserved_by, buried_seq of the queued jobs, as SQL
		state, due, reservedBy, buriedSeq string
		// comeDue: the queued jobs have come due (promoted by reserves, a batch at a time)
		comeDue bool
	}{
		{"Ready", "1", "NULL", "NULL", "NULL", false},
		{"DelayedNotYetDue", "2", "now() + interval '1 hour'", "NULL", "NULL", false},
		{"ReservedNotYetExpired", "3", "now() + interval '1 hour'", "'other.1'", "NULL", false},
		{"Buried", "4", "NULL", "NULL", "nextval('%s.buried_seq')", false},
		{"DelayedDue", "2", "now() - interval '1 hour'", "NULL", "NULL", true},
		{"ReservedExpired", "3", "now() - interval '1 hour'", "'other.1'", "NULL", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// Longer than testCtx: promoting 100,000 due jobs takes 200 reserves.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
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
				// Both forms: the first round (which checks for due jobs) and the one after a
				// promotion (which reserves whatever is ready).
				m := 0
				for _, promoted := range []bool{false, true} {
					explainAnalyze(t, ctx, tx, b.st.get("reserve_many"),
						nil, []string{"default"}, []string{"cost.1"}, promoted).walk(func(n planNode) {
						m = max(m, n.pages())
					})
				}
				return m
			}
			// promoteBacklog reserves (and so promotes, a batch per reserve) until no queued job
			// is due any more: what the workers' own reserves do to a backlog.
			promoteBacklog := func() {
				if !c.comeDue {
					return
				}
				sid := backend.SessionID("cost.drain")
				require.NoError(t, b.BeginSession(ctx, sid, backend.SessionInfo{}))
				for range 1000 {
					var due bool
					require.NoError(t, admin(t).QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+q+
						".jobs WHERE state IN (2, 3) AND due_at <= now())").Scan(&due))
					if !due {
						return
					}
					_, err := b.Reserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{"default"}})
					require.NoError(t, err)
				}
				t.Fatal("the backlog of due jobs is not promoted")
			}
			// settled measures a reserve, vacuuming first as the vacuum loop does when it reads
			// more than limit: after a promotion the entries the promoted rows left in
			// jobs_delayed_tube or jobs_reserved_tube lie where the due check looks (as those of
			// reserved and deleted jobs lie in jobs_ready) until VACUUM removes them. A
			// transaction of a test running alongside can keep VACUUM from removing them, hence
			// a few tries.
			settled := func(limit int) int {
				n := pages()
				for try := 0; n > limit && try < 10; try++ {
					if try > 0 {
						time.Sleep(100 * time.Millisecond)
					}
					require.NoError(t, b.vacuum(ctx))
					n = pages()
				}
				return n
			}
			// steady measures a reserve once the backlog is promoted and vacuumed.
			steady := func(limit int) int {
				if !c.comeDue {
					return 0
				}
				promoteBacklog()
				require.NoError(t, b.vacuum(ctx))
				return settled(limit)
			}
			fill(1000)
			small := pages()
			smallSteady := steady(math.MaxInt)
			fill(99000)
			// The 1,000 jobs promoted above left dead entries in front of the 99,000 new ones.
			large := settled(2*small + 16)
			largeSteady := steady(2*smallSteady + 16)
			t.Logf("pages read by a reserve: %d with 1,000 jobs, %d with 100,000", small, large)
			// An index descent is one page deeper at most; a scan would read hundreds more.
			require.LessOrEqual(t, large, 2*small+16)
			if c.comeDue {
				t.Logf("once the due jobs are promoted: %d with 1,000 jobs, %d with 100,000", smallSteady, largeSteady)
				require.LessOrEqual(t, largeSteady, 2*smallSteady+16)
			}
		})
	}
}
