package postgres

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/stretchr/testify/require"
)

func TestVacuumRemovesTheDeadRowsOfFinishedJobs(t *testing.T) {
	t.Parallel()
	pool := admin(t)
	b := newTestBackend(t, nil)
	ctx := testCtx(t)
	for range 50 {
		id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		require.NoError(t, b.Delete(ctx, "", id))
	}
	require.NoError(t, b.vacuum(ctx))
	// Statistics may reach the view a little later than the VACUUM returns.
	require.Eventually(t, func() bool {
		var vacuums int64
		require.NoError(t, pool.QueryRow(ctx,
			"SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'jobs'", b.opts.Schema).Scan(&vacuums))
		return vacuums > 0
	}, 5*time.Second, 20*time.Millisecond, "the jobs table was never vacuumed")
}
