package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// BenchmarkListingAndFlushAtScale measures listing and flushing a big tube
// (backendtest.BenchmarkListingAndFlushAtScale), each flush call one short transaction (rows it
// has not picked stay free for everyone else). The jobs are inserted with one generate_series
// statement.
func BenchmarkListingAndFlushAtScale(b *testing.B) {
	schema := testSchema(b)
	store := newTestBackend(b, nil, schema)
	ctx := context.Background()
	_, err := store.Put(ctx, backend.PutParams{Tube: "big", TTR: time.Minute, Body: []byte("x")}) // creates the tube
	require.NoError(b, err)
	s := pgx.Identifier{schema}.Sanitize()
	backendtest.BenchmarkListingAndFlushAtScale(b, store, "big", func(jobs int) {
		_, err := admin(b).Exec(ctx, `INSERT INTO `+s+`.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, body)
			SELECT g, 'big', 1, (random() * 100)::int, 0, 60000000, now(), decode(repeat('00', 100), 'hex')
			FROM generate_series(1000000, 1000000 + $1::int - 1) g`, jobs)
		require.NoError(b, err)
		_, err = admin(b).Exec(ctx, `UPDATE `+s+`.tubes SET jobs_count = jobs_count + $1 WHERE name = 'big'`, jobs)
		require.NoError(b, err)
		_, err = admin(b).Exec(ctx, `ANALYZE `+s+`.jobs`)
		require.NoError(b, err)
	})
}
