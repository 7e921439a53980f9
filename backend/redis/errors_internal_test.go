package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Errors read "redis: <op>: <cause>", the cause still found by errors.Is and errors.As, and
// NOT_FOUND is the bare sentinel; no job body is in the text.
func TestErrorsNameTheStoreAndTheOperation(t *testing.T) {
	const body = "s3cret-body"
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(t *testing.T, b *Backend) error
		want string // the error's text begins so
		is   error  // and it matches this with errors.Is
	}{
		{"a script error", func(t *testing.T, b *Backend) error {
			require.NoError(t, b.client.Set(ctx, b.base+":t:bad:ready", "x", 0).Err())
			_, err := b.Put(ctx, backend.PutParams{Tube: "bad", TTR: time.Minute, Body: []byte(body)})
			var redisErr goredis.Error
			require.ErrorAs(t, err, &redisErr)
			return err
		}, "redis: put: WRONGTYPE ", nil},
		{"a caller's context ended", func(t *testing.T, b *Backend) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := b.Put(cctx, backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte(body)})
			return err
		}, "redis: put: context canceled", context.Canceled},
		{"a closed backend", func(t *testing.T, b *Backend) error {
			require.NoError(t, b.Close())
			_, err := b.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte(body)})
			return err
		}, "redis: put: backend closed", errClosed},
		{"a job not found", func(t *testing.T, b *Backend) error {
			return b.Delete(ctx, "s.1", 1<<40)
		}, "backend: not found", backend.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t, newInternalBackend(t))
			require.Error(t, err)
			require.Regexp(t, "^"+tc.want, err.Error())
			require.NotContains(t, err.Error(), body)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// NOT_FOUND comes back as the sentinel itself, not wrapped: an answer, not a failure.
func TestNotFoundIsTheSentinel(t *testing.T) {
	b := newInternalBackend(t)
	err := b.Touch(context.Background(), "s.1", 1<<40)
	require.True(t, errors.Is(err, backend.ErrNotFound) && err == backend.ErrNotFound, "%v", err)
}

// A URL that does not parse is reported without its text, which may hold a password.
func TestParseURLErrorsKeepPasswordsOut(t *testing.T) {
	for _, raw := range []string{
		"redis://user:s3cret@host:%zz/0",
		"redis://user:s3cret@ho st:6379/0",
		"redis://user:s3cret@host:6379/0?dial_timeout=forever",
		"redis://user:s3cret@host:6379/x",
	} {
		_, err := ParseURL(raw)
		require.Error(t, err, raw)
		require.Regexp(t, "^redis: URL: ", err.Error())
		require.NotContains(t, err.Error(), "s3cret", raw)
	}
}
