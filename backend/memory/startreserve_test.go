package memory

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// deliveries records what StartReserve's deliver was called with, and whether the backend's
// lock was free at the time.
type deliveries struct {
	mu       sync.Mutex
	got      []reserveResult
	unlocked []bool
}

func (d *deliveries) deliver(be *Backend) func(*backend.Job, error) {
	return func(j *backend.Job, err error) {
		free := be.mu.TryLock()
		if free {
			be.mu.Unlock()
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.got = append(d.got, reserveResult{j, err})
		d.unlocked = append(d.unlocked, free)
	}
}

func (d *deliveries) list() ([]reserveResult, []bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]reserveResult(nil), d.got...), append([]bool(nil), d.unlocked...)
}

// startFn starts a reserve of the default tube with the given timeout.
type startFn = func(timeout time.Duration) (*backend.Job, backend.PendingReserve, error)

// StartReserve's contract, as the memory store keeps it: an immediate answer delivers nothing; a
// wait's outcome is delivered exactly once, with no backend lock held; Cancel of an undecided
// wait leaves nothing behind and of a decided one reports that the outcome was delivered.
func TestStartReserve(t *testing.T) {
	ctx := context.Background()
	put := func(t *testing.T, be *Backend) uint64 {
		id, err := be.Put(ctx, backend.PutParams{Tube: backend.DefaultTube, Priority: 1, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		return id
	}
	// delivered requires exactly one delivery, made with the lock free, and returns it.
	delivered := func(t *testing.T, d *deliveries) reserveResult {
		got, unlocked := d.list()
		require.Len(t, got, 1)
		require.True(t, unlocked[0], "deliver was called with the backend's lock held")
		return got[0]
	}
	tests := []struct {
		name string
		run  func(t *testing.T, be *Backend, clock *clocktest.Fake, start startFn, d *deliveries)
	}{
		{"a ready job is returned at once, with nothing delivered", func(t *testing.T, be *Backend, _ *clocktest.Fake, start startFn, d *deliveries) {
			id := put(t, be)
			job, pending, err := start(-1)
			require.NoError(t, err)
			require.Nil(t, pending)
			require.Equal(t, id, job.ID)
			got, _ := d.list()
			require.Empty(t, got)
		}},
		{"a put delivers the job once, before Put returns", func(t *testing.T, be *Backend, _ *clocktest.Fake, start startFn, d *deliveries) {
			_, pending, err := start(-1)
			require.NoError(t, err)
			require.NotNil(t, pending)
			got, _ := d.list()
			require.Empty(t, got)
			id := put(t, be)
			r := delivered(t, d)
			require.NoError(t, r.err)
			require.Equal(t, id, r.job.ID)
			put(t, be) // a second job is not delivered again
			delivered(t, d)
		}},
		{"a timeout delivers ErrTimedOut", func(t *testing.T, be *Backend, clock *clocktest.Fake, start startFn, d *deliveries) {
			_, pending, err := start(time.Second)
			require.NoError(t, err)
			require.NotNil(t, pending)
			clock.Advance(time.Second) // the timer fires on its own goroutine
			require.Eventually(t, func() bool { got, _ := d.list(); return len(got) > 0 }, 10*time.Second, time.Millisecond)
			r := delivered(t, d)
			require.ErrorIs(t, r.err, backend.ErrTimedOut)
			require.Nil(t, r.job)
		}},
		{"closing the backend delivers ErrClosed", func(t *testing.T, be *Backend, _ *clocktest.Fake, start startFn, d *deliveries) {
			_, _, err := start(-1)
			require.NoError(t, err)
			require.NoError(t, be.Close())
			require.ErrorIs(t, delivered(t, d).err, ErrClosed)
		}},
		{"cancel before the outcome leaves no waiter behind", func(t *testing.T, be *Backend, _ *clocktest.Fake, start startFn, d *deliveries) {
			_, pending, err := start(-1)
			require.NoError(t, err)
			require.True(t, pending.Cancel())
			id := put(t, be) // stays ready: nobody waits any more
			st, err := be.TubeStats(ctx, backend.DefaultTube)
			require.NoError(t, err)
			require.Equal(t, uint64(1), st.ReadyJobs, "job %d must stay ready", id)
			got, _ := d.list()
			require.Empty(t, got)
		}},
		{"cancel after the outcome reports it delivered", func(t *testing.T, be *Backend, _ *clocktest.Fake, start startFn, d *deliveries) {
			_, pending, err := start(-1)
			require.NoError(t, err)
			id := put(t, be)
			require.False(t, pending.Cancel())
			require.Equal(t, id, delivered(t, d).job.ID)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktest.NewFake(testEpoch)
			be := New(Options{Clock: clock})
			defer be.Close()
			const sid = backend.SessionID("s.1")
			require.NoError(t, be.BeginSession(ctx, sid, backend.SessionInfo{}))
			d := &deliveries{}
			start := func(timeout time.Duration) (*backend.Job, backend.PendingReserve, error) {
				return be.StartReserve(ctx, backend.ReserveParams{Session: sid, Tubes: []string{backend.DefaultTube}, Timeout: timeout}, d.deliver(be))
			}
			tt.run(t, be, clock, start, d)
		})
	}
}
