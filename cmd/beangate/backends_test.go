package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	beanpg "github.com/beangate/beangate/backend/postgres"
	"github.com/beangate/beangate/configs"
)

func TestOpenBackendMemory(t *testing.T) {
	t.Parallel()
	cfg := configs.Defaults()
	store, err := openBackend(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NotNil(t, store)
	require.NoError(t, store.Close())
}

func TestOpenBackendUnknownScheme(t *testing.T) {
	t.Parallel()
	cfg := configs.Defaults()
	cfg.Backend = "mysql://user:s3cret@h/db"
	_, err := openBackend(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.ErrorContains(t, err, `scheme "mysql" is not supported`)
	require.NotContains(t, err.Error(), "s3cret")
}

func TestRedactedURLHidesPassword(t *testing.T) {
	t.Parallel()
	require.Equal(t, "postgres://u:xxxxx@h/db", redactedURL("postgres://u:s3cret@h/db"))
	require.Equal(t, "memory://", redactedURL("memory://"))
}

// A gateway's -z becomes the body limit of the PostgreSQL store's SQL put.
func TestOpenBackendPostgresRecordsMaxJobSize(t *testing.T) {
	t.Parallel()
	url, _ := postgresStore(t)
	cfg := configs.Defaults()
	cfg.Backend = url
	cfg.MaxJobSize = 1234
	store, err := openBackend(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })

	opts, err := beanpg.ParseURL(url)
	require.NoError(t, err)
	conn, err := pgx.Connect(context.Background(), opts.DSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	put := "SELECT " + pgx.Identifier{opts.Schema}.Sanitize() + ".put('default', repeat('x', $1))"
	var id int64
	require.NoError(t, conn.QueryRow(context.Background(), put, 1234).Scan(&id))
	err = conn.QueryRow(context.Background(), put, 1235).Scan(&id)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "54000", pgErr.Code, "%v", err)
	require.Contains(t, pgErr.Message, "max-job-size, 1234 bytes")
}
