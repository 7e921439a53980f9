package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestStatsCountsExpiredReservationsOfEveryTube: stats applies time as it reads, so a reservation
// past its deadline that no reserve has promoted yet counts as ready (urgent below priority 1024)
// and as a timeout, in whichever tube it is; one before its deadline counts as reserved. Stats
// finds the expired ones tube by tube (there is no index on every tube's deadlines).
func TestStatsCountsExpiredReservationsOfEveryTube(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	schema := testSchema(t)
	b := newTestBackend(t, nil, schema)
	q := pgx.Identifier{schema}.Sanitize()
	rows := []struct {
		tube     string
		priority int
		due      string
		n        int
	}{
		{"a", 10, "now() - interval '1 minute'", 3},   // expired, urgent
		{"a", 2000, "now() - interval '1 minute'", 2}, // expired
		{"b", 10, "now() - interval '1 minute'", 4},   // expired, urgent
		{"b", 10, "now() + interval '1 hour'", 5},     // reserved
		{"c", 2000, "now() + interval '1 hour'", 6},   // reserved
	}
	for _, r := range rows {
		_, err := admin(t).Exec(ctx, "INSERT INTO "+q+".tubes (name, jobs_count, total_jobs) VALUES ($1, $2, $2) "+
			"ON CONFLICT (name) DO UPDATE SET jobs_count = tubes.jobs_count + $2", r.tube, r.n)
		require.NoError(t, err)
		_, err = admin(t).Exec(ctx, "INSERT INTO "+q+".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, reserved_by, body) "+
			"SELECT nextval('"+q+".job_ids'), $1, 3, $2, 0, 60000000, now(), "+r.due+", 'other.1', 'x' FROM generate_series(1, $3)",
			r.tube, r.priority, r.n)
		require.NoError(t, err)
	}
	st, err := b.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 9, st.ReadyJobs)
	require.EqualValues(t, 7, st.UrgentJobs)
	require.EqualValues(t, 11, st.ReservedJobs)
	require.EqualValues(t, 9, st.JobTimeouts)
}

// TestStatsExpiredCountDoesNotScanReservations: counting the reservations past their deadline
// reads index pages in proportion to the tubes and the expired reservations, not to every live
// reservation (each reserve once wrote an index on all deadlines, jobs_reserved_due, for this).
func TestStatsExpiredCountDoesNotScanReservations(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	schema := testSchema(t)
	b := newTestBackend(t, nil, schema)
	q := pgx.Identifier{schema}.Sanitize()
	_, err := admin(t).Exec(ctx, "INSERT INTO "+q+".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, reserved_by, body) "+
		"SELECT nextval('"+q+".job_ids'), 'default', 3, 1, 0, 60000000, now(), now() + interval '1 hour', 'other.' || (g % 100), 'x' "+
		"FROM generate_series(1, 100000) g")
	require.NoError(t, err)
	_, err = admin(t).Exec(ctx, "ANALYZE "+q+".jobs")
	require.NoError(t, err)

	conn, err := b.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var expired planNode
	explainAnalyze(t, ctx, conn, b.st.get("stats"), nil).walk(func(n planNode) {
		if n["Subplan Name"] == "CTE expired" {
			expired = n
		}
	})
	require.NotNil(t, expired, "stats counts the expired reservations in its CTE expired")
	pages := expired.pages()
	t.Logf("pages read counting expired reservations among 100,000 live ones: %d", pages)
	// A descent of jobs_reserved_tube per tube; a scan of the reservations reads hundreds.
	require.Less(t, pages, 30)
}
