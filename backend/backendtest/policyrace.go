package backendtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// RunCapShared checks that gateways sharing one store share one max-reserved cap: 20 workers,
// half on each of two Backends that open gives on the same store, reserve and delete as fast as
// they can from a tube capped at 3, and never hold more than 3 jobs at once (counted by the
// workers between a reserve's answer and their delete, and by stats-tube sampled throughout);
// the cap is reached.
func RunCapShared(t *testing.T, open func(t *testing.T) backend.Backend) {
	gws := []backend.Backend{open(t), open(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const capacity, jobs, workers = 3, 400, 20
	require.NoError(t, gws[0].SetPolicy(ctx, backend.Policy{Tube: "work", MaxReserved: capacity}))
	producer := backend.SessionID("captest.p")
	require.NoError(t, gws[1].BeginSession(ctx, producer, backend.SessionInfo{}))
	require.NoError(t, gws[1].UseTube(ctx, producer, "work"))
	for range jobs {
		_, err := gws[1].Put(ctx, backend.PutParams{Session: producer, Tube: "work", TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
	}

	var held, most, done atomic.Int64
	var wg sync.WaitGroup
	for i := range workers {
		gw := gws[i%2]
		s := backend.SessionID(fmt.Sprintf("captest.%d", i))
		require.NoError(t, gw.BeginSession(ctx, s, backend.SessionInfo{}))
		require.NoError(t, gw.WatchTube(ctx, s, "work"))
		require.NoError(t, gw.IgnoreTube(ctx, s, backend.DefaultTube))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < jobs && ctx.Err() == nil {
				j, err := gw.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"work"}, Timeout: 50 * time.Millisecond})
				if errors.Is(err, backend.ErrTimedOut) {
					continue
				}
				if err != nil {
					t.Errorf("reserve: %v", err)
					return
				}
				n := held.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				held.Add(-1)
				if err := gw.Delete(ctx, s, j.ID); err != nil {
					t.Errorf("delete: %v", err)
					return
				}
				done.Add(1)
			}
		}()
	}
	var sampled uint64
	for done.Load() < jobs && ctx.Err() == nil && !t.Failed() {
		ts, err := gws[0].TubeStats(ctx, "work")
		require.NoError(t, err)
		require.LessOrEqual(t, ts.ReservedJobs, uint64(capacity))
		sampled = max(sampled, ts.ReservedJobs)
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	require.NoError(t, ctx.Err())
	require.Equal(t, int64(jobs), done.Load())
	require.LessOrEqual(t, most.Load(), int64(capacity))
	require.Equal(t, int64(capacity), max(most.Load(), int64(sampled)), "the cap was never reached")
}
