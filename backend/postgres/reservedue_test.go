package postgres

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestReserveManyAsksToPromoteFirst: a reserve is one statement, reserve_many, unless its tubes
// hold due jobs not yet promoted (a delayed job whose time has come, a reservation past its
// deadline): then it reserves nothing and answers every session "promote first", and the
// caller's second round (promote_tubes, then reserve_many told so) reserves. Nothing is due in a
// tube of ready jobs and live reservations, so it reserves at once.
func TestReserveManyAsksToPromoteFirst(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		state    string // of the one job besides a ready one, as SQL
		due      string
		promoted bool
		want     bool // "promote first"
	}{
		{"NothingDue", "3", "now() + interval '1 hour'", false, false},
		{"DelayedNotYetDue", "2", "now() + interval '1 hour'", false, false},
		{"DelayedDue", "2", "now() - interval '1 second'", false, true},
		{"ReservationExpired", "3", "now() - interval '1 second'", false, true},
		{"DelayedDueAfterPromotion", "2", "now() - interval '1 second'", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			schema := testSchema(t)
			b := newTestBackend(t, nil, schema)
			q := pgx.Identifier{schema}.Sanitize()
			_, err := admin(t).Exec(ctx, "INSERT INTO "+q+".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, reserved_by, body) VALUES "+
				"(nextval('"+q+".job_ids'), 'default', 1, 1, 0, 60000000, now(), NULL, NULL, 'r'), "+
				"(nextval('"+q+".job_ids'), 'default', "+c.state+", 1, 0, 60000000, now(), "+c.due+", 'other.1', 'x')")
			require.NoError(t, err)
			tx, err := b.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			rows, err := tx.Query(ctx, b.st.get("reserve_many"), nil, []string{"default"}, []string{"s.1", "s.2"}, c.promoted)
			require.NoError(t, err)
			var reserved, first int
			for rows.Next() {
				vals, err := rows.Values()
				require.NoError(t, err)
				if vals[1] != nil {
					reserved++
				}
				if vals[9].(bool) {
					first++
				}
			}
			require.NoError(t, rows.Err())
			if c.want {
				require.Zero(t, reserved, "nothing is reserved before the due jobs are promoted")
				require.Equal(t, 2, first, "every session is told to promote first")
			} else {
				require.Equal(t, 1, reserved)
				require.Zero(t, first)
			}
		})
	}
}

// TestReservePromotesFirstWhileJobsComeDue: a reserve whose tubes had due jobs at the last
// reserve promotes first, in one round (as with delayed jobs maturing all the time), until a
// promotion finds nothing due; then reserves are one statement again. Either way the due job is
// reserved.
func TestReservePromotesFirstWhileJobsComeDue(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	schema := testSchema(t)
	b := newTestBackend(t, nil, schema)
	q := pgx.Identifier{schema}.Sanitize()
	sid := backend.SessionID("due.1")
	require.NoError(t, b.BeginSession(ctx, sid, backend.SessionInfo{}))
	dueListed := func() bool {
		return b.dueListed(reserveItem{tubes: []string{"default"}})
	}
	steps := []struct {
		name     string
		delayed  bool // a delayed job that has come due is there, else a ready one
		listed   bool // before the reserve
		listedAt bool // after it
	}{
		{"FirstDueJobTakesTwoRounds", true, false, true},
		{"NextDueJobPromotedFirst", true, true, true},
		{"NothingDueEndsIt", false, true, false},
		{"ReadyJobOneStatement", false, false, false},
	}
	for _, s := range steps {
		state, due := "1", "NULL"
		if s.delayed {
			state, due = "2", "now() - interval '1 second'"
		}
		_, err := admin(t).Exec(ctx, "INSERT INTO "+q+".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, body) "+
			"VALUES (nextval('"+q+".job_ids'), 'default', "+state+", 1, 0, 60000000, now(), "+due+", 'x')")
		require.NoError(t, err)
		require.Equal(t, s.listed, dueListed(), s.name)
		job, err := b.Reserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{"default"}})
		require.NoError(t, err, s.name)
		require.NotNil(t, job, s.name)
		require.Equal(t, s.listedAt, dueListed(), s.name)
	}
}
