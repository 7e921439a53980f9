package postgres

import (
	"context"
	"embed"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/beangate/beangate/backend"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		base := strings.TrimSuffix(e.Name(), ".sql")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("postgres: migrations: %q is not named NNN_name.sql", e.Name())
		}
		text, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(text)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// Migrate creates schema if needed and applies the migrations it lacks, recording each in
// schema.schema_migrations. It runs in one transaction under an advisory lock keyed by the schema,
// so that many gateways starting at once apply each migration exactly once.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return migrate(ctx, pool, schema, slog.New(slog.DiscardHandler))
}

// migrate is Migrate logging each migration applied, once committed.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, log *slog.Logger) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	q := pgx.Identifier{schema}.Sanitize()
	var done []string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		done = done[:0]
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('beangate.migrate.' || $1))", schema); err != nil {
			return opErr("migration lock", err)
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+q); err != nil {
			return opErr("create schema", err)
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+q+`.schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return opErr("create schema_migrations", err)
		}
		applied := map[int]bool{}
		rows, err := tx.Query(ctx, "SELECT version FROM "+q+".schema_migrations")
		if err != nil {
			return err
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return err
		}
		for _, v := range versions {
			applied[int(v)] = true
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			// No arguments: pgx sends it with the simple protocol, which allows many statements.
			if _, err := tx.Exec(ctx, expand(m.sql, schema)); err != nil {
				return opErr("migration "+m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+q+".schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return err
			}
			done = append(done, m.name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range done {
		log.Info("postgres: migration applied", "schema", schema, "migration", name)
	}
	return nil
}

// checkMigrated fails unless every migration this gateway embeds is recorded in
// schema.schema_migrations: with SkipMigrate, a schema never migrated or behind would otherwise
// surface as INTERNAL_ERROR on every command. Migrations of a newer gateway are no reason to
// refuse (a rolling upgrade migrates first).
func checkMigrated(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	need := ms[len(ms)-1].version
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL",
		pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&exists); err != nil {
		return opErr("checking the schema", err)
	}
	if !exists {
		return fmt.Errorf("postgres: checking the schema: schema %q was never migrated (no schema_migrations table), this gateway needs migration %d: run beangate migrate-db, or start without migrate=false", schema, need)
	}
	rows, err := pool.Query(ctx, "SELECT version FROM "+pgx.Identifier{schema, "schema_migrations"}.Sanitize())
	if err != nil {
		return opErr("checking the schema", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return opErr("checking the schema", err)
	}
	applied := map[int]bool{}
	at := 0
	for _, v := range versions {
		applied[int(v)] = true
		at = max(at, int(v))
	}
	var missing []string
	for _, m := range ms {
		if !applied[m.version] {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("postgres: checking the schema: schema %q is at migration %d, this gateway needs %d (missing %s): run beangate migrate-db, or start without migrate=false",
			schema, at, need, strings.Join(missing, ", "))
	}
	return nil
}

// MigrateOptions connects as opts says (DSN, Schema, CommandTimeout), applies the migrations and
// disconnects: the separate migration step (`beangate migrate-db`) for teams that manage DDL
// themselves and start gateways with SkipMigrate.
func MigrateOptions(ctx context.Context, opts Options) error {
	opts = opts.withDefaults()
	if !schemaName.MatchString(opts.Schema) {
		return backend.BadOptions(fmt.Errorf("postgres: options: schema name %q: want letters, digits and _ (at most 41)", opts.Schema))
	}
	pool := opts.Pool
	if pool == nil {
		cfg, err := pgxpool.ParseConfig(opts.DSN)
		if err != nil {
			return backend.BadOptions(opErr("DSN", err))
		}
		cfg.ConnConfig.ConnectTimeout = opts.CommandTimeout
		if pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return opErr("connect", err)
		}
		defer pool.Close()
	}
	mctx, cancel := context.WithTimeout(ctx, 4*opts.CommandTimeout)
	defer cancel()
	return startErr(migrate(mctx, pool, opts.Schema, opts.Logger))
}
