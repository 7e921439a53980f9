package memory

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// startFn starts a reserve of the default tube with the given timeout.
type startFn = func(timeout time.Duration) (*backend.Job, backend.PendingReserve, error)

// StartReserve's contract (backend.ReserveStarter): an immediate answer needs no wake; a wait
// calls wake exactly once, before its outcome is visible; Cancel of an undecided wait leaves
// nothing behind, and of a decided one returns the outcome.
func TestStartReserve(t *testing.T) {
	ctx := context.Background()
	put := func(t *testing.T, be *Backend) uint64 {
		id, err := be.Put(ctx, backend.PutParams{Tube: backend.DefaultTube, Priority: 1, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		return id
	}
	tests := []struct {
		name string
		run  func(t *testing.T, be *Backend, clock *backend.FakeClock, start startFn, wakes *atomic.Int32)
	}{
		{"a ready job is returned at once, without a wake", func(t *testing.T, be *Backend, _ *backend.FakeClock, start startFn, wakes *atomic.Int32) {
			id := put(t, be)
			job, pending, err := start(-1)
			require.NoError(t, err)
			require.Nil(t, pending)
			require.Equal(t, id, job.ID)
			require.Zero(t, wakes.Load())
		}},
		{"a put wakes the wait once and the job is its outcome", func(t *testing.T, be *Backend, _ *backend.FakeClock, start startFn, wakes *atomic.Int32) {
			_, pending, err := start(-1)
			require.NoError(t, err)
			require.NotNil(t, pending)
			_, _, decided := pending.Result()
			require.False(t, decided)
			id := put(t, be)
			require.Equal(t, int32(1), wakes.Load())
			job, err, decided := pending.Result()
			require.True(t, decided)
			require.NoError(t, err)
			require.Equal(t, id, job.ID)
		}},
		{"a timeout wakes the wait with ErrTimedOut", func(t *testing.T, be *Backend, clock *backend.FakeClock, start startFn, wakes *atomic.Int32) {
			_, pending, err := start(time.Second)
			require.NoError(t, err)
			clock.Advance(time.Second)
			job, err := pending.Wait()
			require.ErrorIs(t, err, backend.ErrTimedOut)
			require.Nil(t, job)
			require.Equal(t, int32(1), wakes.Load())
		}},
		{"cancel before the outcome leaves no waiter behind", func(t *testing.T, be *Backend, _ *backend.FakeClock, start startFn, wakes *atomic.Int32) {
			_, pending, err := start(-1)
			require.NoError(t, err)
			job, err := pending.Cancel()
			require.NoError(t, err)
			require.Nil(t, job)
			id := put(t, be) // stays ready: nobody waits any more
			st, err := be.TubeStats(ctx, backend.DefaultTube)
			require.NoError(t, err)
			require.Equal(t, uint64(1), st.ReadyJobs, "job %d must stay ready", id)
			require.Zero(t, wakes.Load())
		}},
		{"cancel after the outcome returns it", func(t *testing.T, be *Backend, _ *backend.FakeClock, start startFn, wakes *atomic.Int32) {
			_, pending, err := start(-1)
			require.NoError(t, err)
			id := put(t, be)
			job, err := pending.Cancel()
			require.NoError(t, err)
			require.Equal(t, id, job.ID)
			require.Equal(t, int32(1), wakes.Load())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := backend.NewFakeClock(testEpoch)
			be := New(Options{Clock: clock})
			defer be.Close()
			const sid = backend.SessionID("s.1")
			require.NoError(t, be.BeginSession(ctx, sid))
			var wakes atomic.Int32
			start := func(timeout time.Duration) (*backend.Job, backend.PendingReserve, error) {
				return be.StartReserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{backend.DefaultTube}, Timeout: timeout},
					func() { wakes.Add(1) })
			}
			tt.run(t, be, clock, start, &wakes)
		})
	}
}
