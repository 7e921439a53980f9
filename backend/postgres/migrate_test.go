package postgres

import (
	"fmt"
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

// TestMigrateFalseLeavesTheSchemaToMigrateDB: with ?migrate=false a gateway creates and changes
// nothing (the team runs DDL itself) and refuses to start on a schema that lacks migrations it
// needs — never migrated, or migrated by an older version — saying what to run, rather than
// answering INTERNAL_ERROR to every command; MigrateOptions (what `beangate migrate-db` runs)
// brings the schema up to date, and the gateway then works on it. Both are configured from the
// backend URL, as the command line gives it.
func TestMigrateFalseLeavesTheSchemaToMigrateDB(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	require.NoError(t, err)
	last := ms[len(ms)-1]
	cases := []struct {
		name    string
		applied int // the first migrations applied before the gateway starts
		wantErr string
	}{
		{"NeverMigrated", 0, "was never migrated (no schema_migrations table), this gateway needs migration " + fmt.Sprint(last.version)},
		{"Outdated", len(ms) - 1, fmt.Sprintf("is at migration %d, this gateway needs %d (missing %s)", ms[len(ms)-2].version, last.version, last.name)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := admin(t)
			schema := testSchema(t)
			ctx := testCtx(t)
			q := pgx.Identifier{schema}.Sanitize()
			url := withParam(testURL(), "schema="+schema+"&command_timeout=3s&lease_ttl=1500ms&vacuum_interval=-1s")
			schemaExists := func() bool {
				var n int
				require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
				return n == 1
			}
			applied := func() int {
				var n int
				require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+q+".schema_migrations").Scan(&n))
				return n
			}
			if c.applied > 0 {
				// What an older gateway's Migrate left: its migrations, recorded as Migrate does.
				_, err := pool.Exec(ctx, "CREATE SCHEMA "+q+"; CREATE TABLE "+q+
					".schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
				require.NoError(t, err)
				for _, m := range ms[:c.applied] {
					_, err := pool.Exec(ctx, expand(m.sql, schema))
					require.NoError(t, err)
					_, err = pool.Exec(ctx, "INSERT INTO "+q+".schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
					require.NoError(t, err)
				}
			}

			gatewayOpts, err := ParseURL(withParam(url, "migrate=false"))
			require.NoError(t, err)
			require.True(t, gatewayOpts.SkipMigrate)
			_, err = New(ctx, gatewayOpts)
			require.ErrorContains(t, err, c.wantErr)
			require.ErrorContains(t, err, "run beangate migrate-db")
			if c.applied == 0 {
				require.False(t, schemaExists(), "migrate=false must not create the schema")
			} else {
				require.Equal(t, c.applied, applied(), "migrate=false must not migrate")
			}

			migrateOpts, err := ParseURL(url)
			require.NoError(t, err)
			require.NoError(t, MigrateOptions(ctx, migrateOpts))
			require.Equal(t, len(ms), applied())

			b, err := New(ctx, gatewayOpts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("y")})
			require.NoError(t, err)
			job, err := b.Peek(ctx, id)
			require.NoError(t, err)
			require.Equal(t, []byte("y"), job.Body)
		})
	}
}

// TestMigrateLeavesTheJobIndexesThePlansUse: every index on jobs is written by the puts,
// reserves and deletes that move a job through its states (an entry per job and state), so the
// migrated schema has exactly the ones a statement uses; jobs_reserved_due, which only stats used,
// is gone (008). jobs_body_hash and jobs_expiry (010) hold entries only for jobs under a unique
// or expire-after policy: their partial predicates leave out every job of a store without.
func TestMigrateLeavesTheJobIndexesThePlansUse(t *testing.T) {
	t.Parallel()
	pool := admin(t)
	schema := testSchema(t)
	ctx := testCtx(t)
	require.NoError(t, Migrate(ctx, pool, schema))
	rows, err := pool.Query(ctx, "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'jobs' ORDER BY indexname", schema)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"jobs_body_hash", "jobs_buried", "jobs_delayed_due", "jobs_delayed_tube",
		"jobs_expiry", "jobs_pkey", "jobs_ready", "jobs_reserved_by", "jobs_reserved_tube"}, names)
}
