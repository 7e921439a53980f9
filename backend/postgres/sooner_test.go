package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// A waiting reserve times its next try by the earliest due time it saw; a change that makes
// something due sooner (a delayed put or release due before the tube's other delayed jobs, a
// pause cut short) must reach it, on its own gateway and through NOTIFY on another, or it would
// learn of it only at its next poll. The poll is an hour here, so only that news can serve it.
func TestSoonerDueTimeReachesAWaitingReserve(t *testing.T) {
	t.Parallel()
	put := func(t *testing.T, ctx context.Context, b *Backend, delay time.Duration) uint64 {
		id, err := b.Put(ctx, backend.PutParams{Tube: "default", Delay: delay, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		return id
	}
	changes := []struct {
		name   string
		before func(t *testing.T, ctx context.Context, b *Backend) (sooner func()) // the reserve then waits a minute or more
	}{
		{"a delayed put due first", func(t *testing.T, ctx context.Context, b *Backend) func() {
			put(t, ctx, b, time.Hour)
			return func() { put(t, ctx, b, time.Second) }
		}},
		{"a delayed release due first", func(t *testing.T, ctx context.Context, b *Backend) func() {
			put(t, ctx, b, time.Hour)
			holder := backend.SessionID("sooner-holder.1")
			require.NoError(t, b.BeginSession(ctx, holder, backend.SessionInfo{}))
			id := put(t, ctx, b, 0)
			_, err := b.ReserveJob(ctx, holder, id)
			require.NoError(t, err)
			return func() {
				require.NoError(t, b.Release(ctx, backend.ReleaseParams{Session: holder, ID: id, Delay: time.Second}))
			}
		}},
		{"a pause cut short", func(t *testing.T, ctx context.Context, b *Backend) func() {
			put(t, ctx, b, 0)
			require.NoError(t, b.PauseTube(ctx, "default", time.Hour))
			return func() { require.NoError(t, b.PauseTube(ctx, "default", time.Second)) }
		}},
	}
	for _, change := range changes {
		for _, where := range []string{"same gateway", "other gateway"} {
			t.Run(change.name+"/"+where, func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
				schema := testSchema(t)
				waiting, changer := newTestBackend(t, clock, schema), (*Backend)(nil)
				if where == "same gateway" {
					changer = waiting
				} else {
					changer = newTestBackend(t, clock, schema)
				}
				waiting.poll = time.Hour
				sooner := change.before(t, ctx, changer)
				sid := backend.SessionID("sooner-waiter.1") // its lease makes the changer announce
				require.NoError(t, waiting.BeginSession(ctx, sid, backend.SessionInfo{}))
				got := make(chan error, 1)
				go func() {
					_, err := waiting.Reserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{"default"}, Timeout: -1})
					got <- err
				}()
				// Waiting: its one timer is armed for the time it saw.
				require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, 5*time.Millisecond)
				sooner()
				// The reserve re-arms for the sooner time when the news reaches it.
				err, ok := clocktest.AdvanceUntil(clock, got, time.Second, 5, 500*time.Millisecond)
				require.True(t, ok, "the waiting reserve was not told of the sooner due time")
				require.NoError(t, err)
			})
		}
	}
}
