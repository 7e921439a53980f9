package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The batcher runs one batch at a time, answers every caller with its own result, and groups the
// calls that arrive while a batch is in flight.
func TestBatcherOneBatchAtATimeEachCallerItsOwnResult(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	var inFlight, grouped atomic.Int32
	exec := func(_ context.Context, items []int) ([]int, error) {
		if inFlight.Add(1) != 1 {
			t.Error("two batches in flight")
		}
		defer inFlight.Add(-1)
		if len(items) > 1 {
			grouped.Add(1)
		}
		time.Sleep(time.Millisecond) // long enough for other calls to queue up
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = v * 2
		}
		return out, nil
	}
	b := newBatcher(exec, nil, 5, 10*time.Second, stop)
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				v := g*100 + i
				res, err := b.do(context.Background(), v)
				require.NoError(t, err)
				require.Equal(t, 2*v, res)
			}
		}()
	}
	wg.Wait()
	require.Positive(t, grouped.Load(), "no batch held more than one call")
	b.mu.Lock()
	defer b.mu.Unlock()
	require.False(t, b.inFlight)
	require.Empty(t, b.queue)
}

// A caller that gives up while its call is queued gets its error, and the result committed for it
// later goes to abandoned.
func TestBatcherResultOfAGoneCallerIsAbandoned(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	release := make(chan struct{})
	exec := func(_ context.Context, items []int) ([]int, error) {
		if items[0] == 1 {
			<-release
		}
		return items, nil
	}
	abandoned := make(chan int, 1)
	b := newBatcher(exec, func(item, res int) { abandoned <- res }, 10, 10*time.Second, stop)
	first := make(chan error, 1)
	go func() {
		_, err := b.do(context.Background(), 1) // runs at once and holds the batcher
		first <- err
	}()
	require.Eventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.inFlight }, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := b.do(ctx, 2) // queued behind the first
		second <- err
	}()
	require.Eventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-second, context.Canceled)
	close(release)
	require.NoError(t, <-first)
	require.Equal(t, 2, <-abandoned)
}

// doAll's items go out together and in order, in batches of at most max, each answered alone.
func TestBatcherDoAllKeepsOrderInFewBatches(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	var mu sync.Mutex
	var batches [][]int
	exec := func(_ context.Context, items []int) ([]int, error) {
		mu.Lock()
		batches = append(batches, append([]int(nil), items...))
		mu.Unlock()
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = -v
		}
		return out, nil
	}
	b := newBatcher(exec, nil, 5, 10*time.Second, stop)
	items := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	res := make([]int, len(items))
	errs := make([]error, len(items))
	b.doAll(context.Background(), items, res, errs)
	for i, v := range items {
		require.NoError(t, errs[i])
		require.Equal(t, -v, res[i])
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, [][]int{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, {11, 12}}, batches)
}
