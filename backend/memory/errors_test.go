package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Errors read "memory: <op>: <cause>", the cause still found by errors.Is, and NOT_FOUND is the
// bare sentinel.
func TestErrorsNameTheStoreAndTheOperation(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(t *testing.T, b *Backend) error
		want string
		is   error
	}{
		{"a closed backend", func(t *testing.T, b *Backend) error {
			require.NoError(t, b.Close())
			_, err := b.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte("x")})
			return err
		}, "memory: put: backend closed", ErrClosed},
		{"a reserve waiting at Close", func(t *testing.T, b *Backend) error {
			require.NoError(t, b.BeginSession(ctx, "s.1", backend.SessionInfo{}))
			done := make(chan error, 1)
			go func() {
				_, err := b.Reserve(ctx, backend.ReserveParams{Session: "s.1", Tubes: []string{"default"}, Timeout: -1})
				done <- err
			}()
			require.Eventually(t, func() bool {
				b.mu.Lock()
				defer b.mu.Unlock()
				return len(b.sessions["s.1"].waiters) > 0
			}, 5*time.Second, time.Millisecond)
			require.NoError(t, b.Close())
			return <-done
		}, "memory: reserve: backend closed", ErrClosed},
		{"a caller's context ended", func(t *testing.T, b *Backend) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			return b.Delete(cctx, "s.1", 1)
		}, "memory: delete: context canceled", context.Canceled},
		{"an unknown session", func(t *testing.T, b *Backend) error {
			return b.WatchTube(ctx, "s.9", "t")
		}, `memory: watch: unknown session "s.9"`, nil},
		{"a job not found", func(t *testing.T, b *Backend) error {
			return b.Delete(ctx, "s.1", 1<<40)
		}, "backend: not found", backend.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(Options{})
			t.Cleanup(func() { _ = b.Close() })
			err := tc.call(t, b)
			require.Error(t, err)
			require.Regexp(t, "^"+tc.want, err.Error())
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}
