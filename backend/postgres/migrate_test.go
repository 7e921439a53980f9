package postgres

import (
	"sync"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
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

// TestMigrateFalseLeavesTheSchemaToMigrateDB: with ?migrate=false a gateway creates nothing (the
// team runs DDL itself), MigrateOptions — what `beangate migrate-db` runs — creates the schema in
// full, and the gateway then works on it. Both are configured from the backend URL, as the
// command line gives it.
func TestMigrateFalseLeavesTheSchemaToMigrateDB(t *testing.T) {
	t.Parallel()
	pool := admin(t)
	schema := testSchema(t)
	ctx := testCtx(t)
	url := withParam(testURL(), "schema="+schema+"&command_timeout=3s&lease_ttl=1500ms&vacuum_interval=-1s")
	schemaExists := func() bool {
		var n int
		require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
		return n == 1
	}

	gatewayOpts, err := ParseURL(withParam(url, "migrate=false"))
	require.NoError(t, err)
	require.True(t, gatewayOpts.SkipMigrate)
	b, err := New(ctx, gatewayOpts)
	require.NoError(t, err)
	require.False(t, schemaExists(), "migrate=false must not create the schema")
	_, err = b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")})
	require.Error(t, err, "no tables yet")
	require.NoError(t, b.Close())

	migrateOpts, err := ParseURL(url)
	require.NoError(t, err)
	require.NoError(t, MigrateOptions(ctx, migrateOpts))
	ms, err := migrations()
	require.NoError(t, err)
	var applied int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".schema_migrations").Scan(&applied))
	require.Equal(t, len(ms), applied)

	b, err = New(ctx, gatewayOpts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("y")})
	require.NoError(t, err)
	job, err := b.Peek(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []byte("y"), job.Body)
}
