package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

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
