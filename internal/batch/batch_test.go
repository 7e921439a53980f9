package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// double answers each item with twice its value.
func double(_ context.Context, items, results []int) error {
	for i, v := range items {
		results[i] = 2 * v
	}
	return nil
}

// gate is an Exec that holds every batch containing a held item until released, and records
// the items it was given.
type gate struct {
	held    int
	release chan struct{}
	running chan struct{} // closed when the held item's batch has started

	mu   sync.Mutex
	seen []int
}

func newGate(held int) *gate {
	return &gate{held: held, release: make(chan struct{}), running: make(chan struct{})}
}

func (g *gate) exec(ctx context.Context, items, results []int) error {
	g.mu.Lock()
	g.seen = append(g.seen, items...)
	g.mu.Unlock()
	if slices.Contains(items, g.held) {
		close(g.running)
		<-g.release
	}
	return double(ctx, items, results)
}

// behind is an Exec that runs the batch holding first's item through first and every other one
// through rest: a test holds one batch while calls queue up behind it.
func behind(first *gate, rest func(ctx context.Context, items, results []int) error) func(ctx context.Context, items, results []int) error {
	return func(ctx context.Context, items, results []int) error {
		if slices.Contains(items, first.held) {
			return first.exec(ctx, items, results)
		}
		return rest(ctx, items, results)
	}
}

func (g *gate) saw(item int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.seen, item)
}

type result struct {
	res int
	err error
}

// doAsync runs b.Do(ctx, item) on a goroutine of its own.
func doAsync(b *Batcher[int, int], ctx context.Context, item int) <-chan result {
	ch := make(chan result, 1)
	go func() {
		res, err := b.Do(ctx, item)
		ch <- result{res, err}
	}()
	return ch
}

func queued(b *Batcher[int, int]) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

func waitQueued(t *testing.T, b *Batcher[int, int], n int) {
	t.Helper()
	require.Eventually(t, func() bool { return queued(b) == n }, 5*time.Second, time.Millisecond)
}

// With one batch in flight at most, every caller gets its own result and the calls that arrive
// while a batch is in flight are grouped.
func TestOneBatchAtATimeEachCallerItsOwnResult(t *testing.T) {
	var inFlight, grouped atomic.Int32
	exec := func(ctx context.Context, items, results []int) error {
		if inFlight.Add(1) != 1 {
			t.Error("two batches in flight")
		}
		defer inFlight.Add(-1)
		if len(items) > 5 {
			t.Errorf("a batch of %d calls, more than MaxCalls", len(items))
		}
		if len(items) > 1 {
			grouped.Add(1)
		}
		time.Sleep(time.Millisecond) // long enough for other calls to queue up
		return double(ctx, items, results)
	}
	b := New(Config[int, int]{Exec: exec, MaxCalls: 5, MaxInFlight: 1, Timeout: 10 * time.Second})
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			for i := range 20 {
				v := g*100 + i
				res, err := b.Do(context.Background(), v)
				require.NoError(t, err)
				require.Equal(t, 2*v, res)
			}
		})
	}
	wg.Wait()
	require.Positive(t, grouped.Load(), "no batch held more than one call")
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Zero(t, b.inFlight)
	require.Empty(t, b.queue)
}

// Callers calling at once keep the batch slots busy and handed over: a few use both (each alone
// in its batch), many share one. Both leaders may finish before a call handed a slot has run
// (beforeSend makes that likely); a slot handed to a call that already leads would be lost, and
// with both lost later calls wait with nobody to send them until they time out.
func TestSlotsAreNeverLost(t *testing.T) {
	for _, callers := range []int{2, 3, 32} {
		t.Run(fmt.Sprintf("%d callers", callers), func(t *testing.T) {
			exec := func(ctx context.Context, items, results []int) error {
				time.Sleep(50 * time.Microsecond) // a round trip
				return double(ctx, items, results)
			}
			b := New(Config[int, int]{Exec: exec, MaxCalls: 256, MaxInFlight: 2, Timeout: 2 * time.Second})
			b.SetBeforeSend(func() { time.Sleep(200 * time.Microsecond) })
			callConcurrently(t, b, callers, 60)
		})
	}
}

func callConcurrently(t *testing.T, b *Batcher[int, int], callers, calls int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			for i := range calls {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				res, err := b.Do(ctx, i)
				cancel()
				if err == nil && res != 2*i {
					err = fmt.Errorf("call %d answered %d", i, res)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second): // far beyond the calls' own timeouts
		t.Fatal("calls never completed: a batch slot was lost")
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// Two callers, each waiting for its own reply (a producer and a worker), each have a batch in
// flight at once; they do not take turns behind one slot.
func TestFewCallersSendSideBySide(t *testing.T) {
	var mu sync.Mutex
	sending, most := 0, 0
	exec := func(ctx context.Context, items, results []int) error {
		mu.Lock()
		sending++
		most = max(most, sending)
		mu.Unlock()
		// Until it has happened once, wait a little for the other caller's batch, as a slow
		// round trip would.
		for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			seen := most == 2
			mu.Unlock()
			if seen {
				break
			}
		}
		mu.Lock()
		sending--
		mu.Unlock()
		return double(ctx, items, results)
	}
	b := New(Config[int, int]{Exec: exec, MaxCalls: 256, MaxInFlight: 2, Timeout: 2 * time.Second})
	callConcurrently(t, b, 2, 10)
	require.Equal(t, 2, most, "the second caller's call waited for the first one's batch")
}

func TestBatchLen(t *testing.T) {
	const maxCalls, maxBytes = 8, 100
	many := make([]int, maxCalls+3)
	for _, tc := range []struct {
		name     string
		sizes    []int
		maxBytes int
		want     int
	}{
		{"empty", nil, maxBytes, 0},
		{"small calls all go", []int{10, 20, 30}, maxBytes, 3},
		{"at most MaxCalls", many, maxBytes, maxCalls},
		{"up to MaxBytes", []int{maxBytes / 2, maxBytes / 2, 1}, maxBytes, 2},
		{"a big first call goes alone", []int{2 * maxBytes, 1}, maxBytes, 1},
		{"a big call waits for the next batch", []int{1, maxBytes}, maxBytes, 1},
		{"no MaxBytes: sizes do not count", []int{maxBytes, maxBytes, maxBytes}, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(Config[int, int]{Exec: double, MaxCalls: maxCalls, MaxBytes: tc.maxBytes, Timeout: time.Second})
			for _, n := range tc.sizes {
				b.queue = append(b.queue, &call[int, int]{size: n})
			}
			require.Equal(t, tc.want, b.batchLen())
		})
	}
}

// Config.Size is asked once per call, and what it says bounds a batch.
func TestSizeBoundsBatches(t *testing.T) {
	g := newGate(1)
	var batches [][]int
	var mu sync.Mutex
	exec := func(ctx context.Context, items, results []int) error {
		mu.Lock()
		batches = append(batches, slices.Clone(items))
		mu.Unlock()
		return g.exec(ctx, items, results)
	}
	b := New(Config[int, int]{Exec: exec, Size: func(v int) int { return v }, MaxCalls: 100, MaxBytes: 100, Timeout: 10 * time.Second})
	first := doAsync(b, context.Background(), 1)
	<-g.running
	var rest []<-chan result
	for _, v := range []int{60, 30, 20} { // 60+30 fit, 20 more do not
		rest = append(rest, doAsync(b, context.Background(), v))
		waitQueued(t, b, len(rest))
	}
	close(g.release)
	require.NoError(t, (<-first).err)
	for _, r := range rest {
		require.NoError(t, (<-r).err)
	}
	require.Equal(t, [][]int{{1}, {60, 30}, {20}}, batches)
}

// The cancellation rule: a call whose context ends while it is queued is withdrawn (never sent);
// a call whose batch was sent is waited for and gets its result, whenever its context ends.
func TestCancellation(t *testing.T) {
	t.Run("a call withdrawn while queued is never sent", func(t *testing.T) {
		g := newGate(1)
		b := New(Config[int, int]{Exec: g.exec, MaxCalls: 10, Timeout: 10 * time.Second})
		first := doAsync(b, context.Background(), 1) // runs at once and holds the only slot
		<-g.running
		ctx, cancel := context.WithCancel(context.Background())
		second := doAsync(b, ctx, 2) // queued behind the first
		waitQueued(t, b, 1)
		cancel()
		select {
		case r := <-second:
			require.ErrorIs(t, r.err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("a queued call whose context ended waits for a batch")
		}
		require.Zero(t, queued(b), "the withdrawn call left the queue")
		close(g.release)
		require.Equal(t, result{2, nil}, <-first)
		_, err := b.Do(context.Background(), 3) // the slot was given back
		require.NoError(t, err)
		require.False(t, g.saw(2), "the withdrawn call was sent")
	})
	t.Run("a call sent gets its result after its context ended", func(t *testing.T) {
		g := newGate(1)
		b := New(Config[int, int]{Exec: g.exec, MaxCalls: 10, Timeout: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		first := doAsync(b, ctx, 1)
		<-g.running
		cancel()
		select {
		case r := <-first:
			t.Fatalf("the call returned %v before its batch was answered", r)
		case <-time.After(50 * time.Millisecond):
		}
		close(g.release)
		require.Equal(t, result{2, nil}, <-first, "the result of an operation that ran is not lost")
	})
	t.Run("a queued call sent in a batch gets its result after its context ended", func(t *testing.T) {
		hold, g := newGate(1), newGate(2)
		b := New(Config[int, int]{Exec: behind(hold, g.exec), MaxCalls: 10, Timeout: 10 * time.Second})
		first := doAsync(b, context.Background(), 1)
		<-hold.running
		ctx, cancel := context.WithCancel(context.Background())
		second := doAsync(b, ctx, 2)
		waitQueued(t, b, 1)
		close(hold.release)
		<-g.running // the second call's batch is out
		cancel()
		close(g.release)
		require.Equal(t, result{2, nil}, <-first)
		require.Equal(t, result{4, nil}, <-second)
	})
	t.Run("a call with an ended context is refused", func(t *testing.T) {
		g := newGate(0)
		b := New(Config[int, int]{Exec: g.exec, MaxCalls: 10, Timeout: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := b.Do(ctx, 1)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, g.saw(1))
	})
	t.Run("a call due while queued is not sent", func(t *testing.T) {
		const timeout = 50 * time.Millisecond
		release := make(chan struct{})
		var seen atomic.Int32
		exec := func(ctx context.Context, items, results []int) error {
			for _, v := range items {
				seen.Store(int32(v))
			}
			if items[0] == 1 {
				<-release // a store that overruns its deadline
			}
			return double(ctx, items, results)
		}
		b := New(Config[int, int]{Exec: exec, MaxCalls: 10, Timeout: timeout})
		first := doAsync(b, context.Background(), 1)
		require.Eventually(t, func() bool { return seen.Load() == 1 }, 5*time.Second, time.Millisecond)
		second := doAsync(b, context.Background(), 2)
		waitQueued(t, b, 1)
		time.Sleep(2 * timeout)
		close(release)
		require.Equal(t, result{2, nil}, <-first)
		r := <-second
		require.ErrorIs(t, r.err, context.DeadlineExceeded)
		require.EqualValues(t, 1, seen.Load(), "the call due was sent")
	})
}

// A batch's context ends when the first of its calls is due: queued + Timeout.
func TestBatchContextEndsAtTheEarliestDueTime(t *testing.T) {
	const timeout = 5 * time.Second
	deadlines := make(chan time.Time, 1)
	exec := func(ctx context.Context, items, results []int) error {
		d, ok := ctx.Deadline()
		require.True(t, ok)
		deadlines <- d
		return double(ctx, items, results)
	}
	b := New(Config[int, int]{Exec: exec, MaxCalls: 10, Timeout: timeout})
	before := time.Now()
	_, err := b.Do(context.Background(), 1)
	after := time.Now()
	require.NoError(t, err)
	d := <-deadlines
	require.False(t, d.Before(before.Add(timeout)))
	require.False(t, d.After(after.Add(timeout)))
}

// An error for the whole batch reaches every call in it.
func TestBatchErrorReachesEveryCall(t *testing.T) {
	boom := errors.New("boom")
	g := newGate(1)
	b := New(Config[int, int]{Exec: behind(g, func(_ context.Context, _, results []int) error {
		results[0] = 99 // set, but the batch failed
		return boom
	}), MaxCalls: 10, Timeout: 10 * time.Second})
	first := doAsync(b, context.Background(), 1)
	<-g.running
	second, third := doAsync(b, context.Background(), 2), doAsync(b, context.Background(), 3)
	waitQueued(t, b, 2)
	close(g.release)
	require.NoError(t, (<-first).err)
	for _, ch := range []<-chan result{second, third} {
		require.Equal(t, result{0, boom}, <-ch)
	}
}

// A batch's frame is reused and left holding nothing: each Exec gets zero results, and no item
// or result of a past batch stays reachable.
func TestFramesAreReusedAndCleared(t *testing.T) {
	var dirty atomic.Bool
	exec := func(ctx context.Context, items, results []int) error {
		for _, r := range results {
			if r != 0 {
				dirty.Store(true)
			}
		}
		return double(ctx, items, results)
	}
	b := New(Config[int, int]{Exec: exec, MaxCalls: 256, MaxInFlight: 2, Timeout: 10 * time.Second})
	callConcurrently(t, b, 8, 50)
	require.False(t, dirty.Load(), "an Exec got results left from an earlier batch")
	b.mu.Lock()
	defer b.mu.Unlock()
	require.NotEmpty(t, b.spare)
	require.LessOrEqual(t, len(b.spare), 2, "more frames than batches in flight at once")
	for _, f := range b.spare {
		require.Empty(t, f.calls)
		require.Empty(t, f.items)
		require.Empty(t, f.results)
		for _, r := range f.results[:cap(f.results)] {
			require.Zero(t, r)
		}
		for _, it := range f.items[:cap(f.items)] {
			require.Zero(t, it)
		}
		for _, c := range f.calls[:cap(f.calls)] {
			require.Nil(t, c)
		}
	}
}

// Stop fails the queued calls and every later one with ErrClosed; a batch in flight finishes
// and its calls get their results.
func TestStop(t *testing.T) {
	g := newGate(1)
	b := New(Config[int, int]{Exec: g.exec, MaxCalls: 10, Timeout: 10 * time.Second})
	first := doAsync(b, context.Background(), 1)
	<-g.running
	second := doAsync(b, context.Background(), 2)
	waitQueued(t, b, 1)
	b.Stop()
	require.ErrorIs(t, (<-second).err, ErrClosed)
	_, err := b.Do(context.Background(), 3)
	require.ErrorIs(t, err, ErrClosed)
	close(g.release)
	require.Equal(t, result{2, nil}, <-first)
	require.False(t, g.saw(2))
	require.False(t, g.saw(3))
}

// DoSent reports when the call's batch was sent: after the call, before its answer.
func TestDoSentReportsWhenSent(t *testing.T) {
	b := New(Config[int, int]{Exec: double, MaxCalls: 10, Timeout: 10 * time.Second})
	before := time.Now()
	res, sent, err := b.DoSent(context.Background(), 4)
	require.NoError(t, err)
	require.Equal(t, 8, res)
	require.False(t, sent.Before(before))
	require.False(t, sent.After(time.Now()))
}

// A Batcher without a timeout would find every call due at once and send none: New refuses it.
func TestNewRefusesNoTimeout(t *testing.T) {
	require.Panics(t, func() { New(Config[int, int]{Exec: double}) })
}

// DoAll's items go out together and in order, in batches of at most MaxCalls, each answered on
// its own.
func TestDoAllKeepsOrderInFewBatches(t *testing.T) {
	var mu sync.Mutex
	var batches [][]int
	exec := func(ctx context.Context, items, results []int) error {
		mu.Lock()
		batches = append(batches, slices.Clone(items))
		mu.Unlock()
		return double(ctx, items, results)
	}
	b := New(Config[int, int]{Exec: exec, MaxCalls: 5, Timeout: 10 * time.Second})
	items := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	res := make([]int, len(items))
	errs := make([]error, len(items))
	b.DoAll(context.Background(), items, res, errs)
	for i, v := range items {
		require.NoError(t, errs[i])
		require.Equal(t, 2*v, res[i])
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, [][]int{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, {11, 12}}, batches)
}

// DoAll behind a batch in flight: its items queue, and when its context ends the ones still
// queued are withdrawn while those sent are answered.
func TestDoAllWithdrawsWhatIsStillQueued(t *testing.T) {
	first, second := newGate(1), newGate(10)
	b := New(Config[int, int]{Exec: behind(first, second.exec), MaxCalls: 2, Timeout: 10 * time.Second})
	one := doAsync(b, context.Background(), 1)
	<-first.running
	ctx, cancel := context.WithCancel(context.Background())
	items := []int{10, 11, 12, 13}
	res := make([]int, len(items))
	errs := make([]error, len(items))
	done := make(chan struct{})
	go func() {
		b.DoAll(ctx, items, res, errs)
		close(done)
	}()
	waitQueued(t, b, 4)
	close(first.release)
	require.Equal(t, result{2, nil}, <-one)
	<-second.running // {10, 11} is out; {12, 13} waits for it
	cancel()
	close(second.release)
	<-done
	require.Equal(t, []int{20, 22, 0, 0}, res)
	require.Equal(t, []error{nil, nil, context.Canceled, context.Canceled}, errs)
	require.False(t, second.saw(12))
	require.False(t, second.saw(13))
}

// DoAll on a stopped Batcher, or with an ended context, fails every item at once.
func TestDoAllRefused(t *testing.T) {
	b := New(Config[int, int]{Exec: double, MaxCalls: 5, Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs := make([]error, 2)
	b.DoAll(ctx, []int{1, 2}, make([]int, 2), errs)
	require.Equal(t, []error{context.Canceled, context.Canceled}, errs)
	b.Stop()
	b.DoAll(context.Background(), []int{1, 2}, make([]int, 2), errs)
	require.Equal(t, []error{ErrClosed, ErrClosed}, errs)
}
