package postgres

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// TestListingAndFlushAtScale measures listing and flushing a 1M-job tube: a page of 100 from
// the middle, and the longest single call of a flush (each call is one short transaction; rows
// it has not picked stay free for everyone else). The jobs are inserted with one
// generate_series statement. Only the first BEANGATE_SCALE_FLUSH_CALLS calls of the flush are
// timed (100 by default: the calls do not slow down as the tube empties, and all 1000 take a
// while). A measurement, not a check run by default: BEANGATE_SCALE=1.
func TestListingAndFlushAtScale(t *testing.T) {
	if os.Getenv("BEANGATE_SCALE") != "1" {
		t.Skip("a measurement: BEANGATE_SCALE=1")
	}
	jobs := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("BEANGATE_SCALE_JOBS")); err == nil {
		jobs = n
	}
	calls := 100
	if n, err := strconv.Atoi(os.Getenv("BEANGATE_SCALE_FLUSH_CALLS")); err == nil {
		calls = n
	}
	schema := testSchema(t)
	b := newTestBackend(t, nil, schema)
	ctx := context.Background()
	_, err := b.Put(ctx, backend.PutParams{Tube: "big", TTR: time.Minute, Body: []byte("x")}) // creates the tube
	require.NoError(t, err)
	s := pgx.Identifier{schema}.Sanitize()
	start := time.Now()
	_, err = admin(t).Exec(ctx, `INSERT INTO `+s+`.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, body)
		SELECT g, 'big', 1, (random() * 100)::int, 0, 60000000, now(), decode(repeat('00', 100), 'hex')
		FROM generate_series(1000000, 1000000 + $1::int - 1) g`, jobs)
	require.NoError(t, err)
	_, err = admin(t).Exec(ctx, `UPDATE `+s+`.tubes SET jobs_count = jobs_count + $1 WHERE name = 'big'`, jobs)
	require.NoError(t, err)
	_, err = admin(t).Exec(ctx, `ANALYZE `+s+`.jobs`)
	require.NoError(t, err)
	t.Logf("filled %d jobs in %v", jobs, time.Since(start))

	backendtest.MeasureListingAndFlush(t, b, "big", jobs, calls)
}
