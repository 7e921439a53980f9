package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestReservePromotesDueJobs: reserve_many makes the delayed jobs whose time has come and the
// expired reservations of its tubes ready, a batch per statement (see its header), and the
// bookkeeping stays what a TTR expiry or a promote step gives: an expired reservation counts one
// timeout on the job and in the store and loses its owner, whether this reserve takes it or
// only promotes it; every job is reserved exactly once; stats agree. With fewer due jobs than a
// batch, reserves come in exact (priority, id) order over ready and due jobs together; with more,
// the backlog takes several reserves to promote (the order may then deviate, not checked).
func TestReservePromotesDueJobs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                    string
		ready, delayedDue, expd int
		exactOrder              bool
	}{
		{"WithinOneBatch", 150, 150, 150, true},
		{"LargerThanABatch", 0, 1200, 1200, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			schema := testSchema(t)
			b := newTestBackend(t, nil, schema)
			q := pgx.Identifier{schema}.Sanitize()
			fill := func(n int, state, due, reservedBy string) {
				_, err := admin(t).Exec(ctx, "INSERT INTO "+q+".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, reserved_by, body) "+
					"SELECT nextval('"+q+".job_ids'), 'default', "+state+", (random() * 20)::int, 0, 60000000, now(), "+
					due+", "+reservedBy+", 'x' FROM generate_series(1, $1)", n)
				require.NoError(t, err)
			}
			fill(c.ready, "1", "NULL", "NULL")
			fill(c.delayedDue, "2", "now() - interval '1 hour'", "NULL")
			fill(c.expd, "3", "now() - interval '1 hour'", "'other.1'")
			total := c.ready + c.delayedDue + c.expd
			count := func(where string) int {
				var n int
				require.NoError(t, admin(t).QueryRow(ctx, "SELECT count(*) FROM "+q+".jobs WHERE "+where).Scan(&n))
				return n
			}

			sid := backend.SessionID("promo.1")
			require.NoError(t, b.BeginSession(ctx, sid, backend.SessionInfo{}))
			reserve := func() *backend.Job {
				job, err := b.Reserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{"default"}})
				require.NoError(t, err)
				return job
			}
			first := reserve()
			// Promoted, not reserved: ready, without owner or due time, its timeout counted.
			require.Zero(t, count("state = 1 AND (reserved_by IS NOT NULL OR due_at IS NOT NULL)"))
			require.Zero(t, count("state = 1 AND timeouts = 0 AND id > "+fmt.Sprint(c.ready+c.delayedDue)))
			if c.exactOrder {
				require.Zero(t, count("state IN (2, 3) AND due_at <= now()"),
					"a batch promotes every due job")
			} else {
				require.NotZero(t, count("state = 2"), "one batch, not the whole backlog")
			}
			var promotedExpired int64
			require.NoError(t, admin(t).QueryRow(ctx, "SELECT min(id) FROM "+q+".jobs WHERE state = 1 AND timeouts = 1").Scan(&promotedExpired))
			if c.exactOrder {
				// stats-job runs promote.sql first, which would promote the rest of a larger
				// backlog at once: here it is all promoted already.
				js, err := b.JobStats(ctx, uint64(promotedExpired))
				require.NoError(t, err)
				require.Equal(t, backend.Ready, js.State)
				require.EqualValues(t, 1, js.Timeouts)
			}

			type key struct{ prio, id uint64 }
			got := []key{{uint64(first.Priority), first.ID}}
			seen := map[uint64]bool{first.ID: true}
			for len(got) < total {
				job := reserve()
				require.False(t, seen[job.ID], "job %d reserved twice", job.ID)
				seen[job.ID] = true
				got = append(got, key{uint64(job.Priority), job.ID})
			}
			if c.exactOrder {
				for i := 1; i < len(got); i++ {
					prev, cur := got[i-1], got[i]
					require.True(t, prev.prio < cur.prio || prev.prio == cur.prio && prev.id < cur.id,
						"reserve %d: (%d, %d) after (%d, %d)", i, cur.prio, cur.id, prev.prio, prev.id)
				}
			}
			_, err := b.Reserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{"default"}})
			require.ErrorIs(t, err, backend.ErrTimedOut)

			js, err := b.JobStats(ctx, first.ID)
			require.NoError(t, err)
			require.Equal(t, backend.Reserved, js.State)
			require.EqualValues(t, 1, js.Reserves)
			js, err = b.JobStats(ctx, uint64(promotedExpired))
			require.NoError(t, err)
			require.Equal(t, backend.Reserved, js.State)
			require.EqualValues(t, 1, js.Reserves)
			require.EqualValues(t, 1, js.Timeouts)
			st, err := b.Stats(ctx)
			require.NoError(t, err)
			require.EqualValues(t, total, st.ReservedJobs)
			require.Zero(t, st.ReadyJobs)
			require.Zero(t, st.DelayedJobs)
			require.EqualValues(t, c.expd, st.JobTimeouts)
			require.Equal(t, c.expd, count("timeouts = 1"))
			require.Equal(t, total, count("reserves = 1 AND reserved_by = 'promo.1'"))
		})
	}
}
