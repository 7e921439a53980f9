package postgres

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMigrateConcurrentlyAppliesEachMigrationOnce(t *testing.T) {
	t.Parallel()
	pool := admin(t)
	schema := testSchema(t)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Migrate(ctx, pool, schema)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	ms, err := migrations()
	require.NoError(t, err)
	rows, err := pool.Query(ctx, "SELECT version FROM "+pgx.Identifier{schema}.Sanitize()+".schema_migrations ORDER BY version")
	require.NoError(t, err)
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	require.Len(t, versions, len(ms))
	for i, m := range ms {
		require.Equal(t, int32(m.version), versions[i])
	}
	require.NoError(t, Migrate(ctx, pool, schema), "migrating an up-to-date schema is a no-op")
}
