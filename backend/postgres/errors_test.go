package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// Errors read "postgres: <op>: <cause>", the cause still found by errors.Is and errors.As, and
// NOT_FOUND is the bare sentinel; no job body is in the text, even when the database's own
// error detail quotes the row.
func TestErrorsNameTheStoreAndTheOperation(t *testing.T) {
	const body = "s3cret-body"
	hexBody := fmt.Sprintf(`\x%x`, body) // as bytea shows in a row
	put := func(ctx context.Context, b *Backend) error {
		_, err := b.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte(body)})
		return err
	}
	for _, tc := range []struct {
		name string
		call func(t *testing.T, b *Backend, schema string) error
		want string // the error's text begins so
		is   error  // and it matches this with errors.Is
	}{
		{"a statement error", func(t *testing.T, b *Backend, schema string) error {
			_, err := admin(t).Exec(testCtx(t), "ALTER TABLE "+pgx.Identifier{schema, "jobs"}.Sanitize()+
				" ADD CONSTRAINT no_bodies CHECK (length(body) < 0) NOT VALID")
			require.NoError(t, err)
			err = put(testCtx(t), b)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Contains(t, pgErr.Detail, hexBody, "the database's detail quotes the row")
			return err
		}, "postgres: put: ERROR: new row for relation", nil},
		{"a caller's context ended", func(t *testing.T, b *Backend, _ string) error {
			ctx, cancel := context.WithCancel(testCtx(t))
			cancel()
			return put(ctx, b)
		}, "postgres: put: context canceled", context.Canceled},
		{"a closed backend", func(t *testing.T, b *Backend, _ string) error {
			require.NoError(t, b.Close())
			return put(testCtx(t), b)
		}, "postgres: put: backend closed", errClosed},
		{"a closed backend, unbatched", func(t *testing.T, b *Backend, _ string) error {
			require.NoError(t, b.Close())
			_, err := b.Stats(testCtx(t))
			return err
		}, "postgres: stats: backend closed", errClosed},
		{"a job not found", func(t *testing.T, b *Backend, _ string) error {
			return b.Delete(testCtx(t), "s.1", 1<<40)
		}, "backend: not found", backend.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := testSchema(t)
			err := tc.call(t, newTestBackend(t, nil, schema), schema)
			require.Error(t, err)
			require.Regexp(t, "^"+tc.want, err.Error())
			require.NotContains(t, err.Error(), body)
			require.NotContains(t, err.Error(), hexBody)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// NOT_FOUND comes back as the sentinel itself, not wrapped: an answer, not a failure; a
// statement that finds no row (pgx.ErrNoRows) is one too.
func TestNotFoundIsTheSentinel(t *testing.T) {
	b := newTestBackend(t, nil)
	ctx := testCtx(t)
	require.Equal(t, backend.ErrNotFound, b.Touch(ctx, "s.1", 1<<40))
	require.Equal(t, backend.ErrNotFound, opErr("x", pgx.ErrNoRows))
}

// A backend URL or DSN that does not parse is reported without its password.
func TestURLErrorsKeepPasswordsOut(t *testing.T) {
	for _, raw := range []string{
		"postgres://user:s3cret@host:%zz/db",
		"postgres://user:s3cret@ho st/db",
		"postgres://user:s3cret@host/db?command_timeout=soon",
	} {
		_, err := ParseURL(raw)
		require.Error(t, err, raw)
		require.Regexp(t, "^postgres: URL: ", err.Error())
		require.NotContains(t, err.Error(), "s3cret", raw)
	}
	_, err := New(context.Background(), Options{DSN: "postgres://user:s3cret@host/db?sslmode=bogus"})
	require.Error(t, err)
	require.Regexp(t, "^postgres: DSN: ", err.Error())
	require.NotContains(t, err.Error(), "s3cret")
}
