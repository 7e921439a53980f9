package redis_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Two gateways on one namespace share one cap: 20 workers, half on each, reserving and deleting
// as fast as they can from a tube capped at 3, never hold more than 3 jobs at once (counted by
// the workers between a reserve's answer and their delete, and by stats-tube sampled
// throughout), and the cap is reached.
func TestTwoGatewaysNeverExceedTheCap(t *testing.T) {
	requireRedis(t)
	prefix := newPrefix(t)
	gws := []backend.Backend{newBackend(t, prefix, nil, 0), newBackend(t, prefix, nil, 0)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const capacity, jobs, workers = 3, 400, 20
	require.NoError(t, gws[0].SetPolicy(ctx, backend.Policy{Tube: "work", MaxReserved: capacity}))
	producer := backend.SessionID("p.0")
	require.NoError(t, gws[1].BeginSession(ctx, producer))
	require.NoError(t, gws[1].UseTube(ctx, producer, "work"))
	for range jobs {
		_, err := gws[1].Put(ctx, backend.PutParams{Session: producer, Tube: "work", TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
	}

	var held, most, done atomic.Int64
	var wg sync.WaitGroup
	for i := range workers {
		gw := gws[i%2]
		s := backend.SessionID("w." + string(rune('a'+i)))
		require.NoError(t, gw.BeginSession(ctx, s))
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
				if !assertNoError(t, err) {
					return
				}
				n := held.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				held.Add(-1)
				if !assertNoError(t, gw.Delete(ctx, s, j.ID)) {
					return
				}
				done.Add(1)
			}
		}()
	}
	var sampled int64
	for done.Load() < jobs && ctx.Err() == nil {
		ts, err := gws[0].TubeStats(ctx, "work")
		require.NoError(t, err)
		require.LessOrEqual(t, ts.ReservedJobs, uint64(capacity))
		sampled = max(sampled, int64(ts.ReservedJobs))
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	require.NoError(t, ctx.Err())
	require.Equal(t, int64(jobs), done.Load())
	require.LessOrEqual(t, most.Load(), int64(capacity))
	require.Equal(t, int64(capacity), max(most.Load(), sampled), "the cap was never reached")
}

// assertNoError reports err without stopping the goroutine's caller (require may only stop the
// test's own goroutine).
func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}
