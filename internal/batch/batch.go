// Package batch coalesces calls from many goroutines into batches, each run by one function
// call (for a store: one round trip). The stores use it to send the operations of many sessions
// together: backend/redis as one FCALL per batch, backend/postgres as one transaction (group
// commit).
//
// While a batch is out, the calls that arrive queue up and go out together in the next one, so
// batches are as large as the load makes them and a store pays one round trip for all of them.
// There are no worker goroutines: a caller that finds a free slot sends the queue itself (it
// leads), and when its batch is answered it hands the slot to the first caller still queued,
// which is woken for its result anyway. So a lone caller runs its batch on its own goroutine,
// with no hand-off to another goroutine and back, and none waits for a timer.
//
// # Cancellation
//
// A call whose context ends, or whose time (Config.Timeout from when it was queued) runs out,
// before its batch is sent is withdrawn: it is answered with ctx.Err() (or
// context.DeadlineExceeded) and never reaches the store. Once its batch is sent, the call waits
// for its result, however its context ends, and returns it.
//
// Why: before the batch is sent nothing has happened, so giving up costs nothing and the store
// is spared work nobody will hear of. After, the store may have applied the operation — a job
// stored, deleted or reserved — and only the reply says so; a caller told that its call failed
// while it took effect would leave a job reserved by a session that never saw it, or a client
// told a put failed whose job is there. Running withdrawn calls anyway and undoing what they did
// would need an undo for every operation, and a write cannot be undone unseen. So an operation
// sent is always reported: the caller decides what to do with a result that came after its
// context ended (a reserve returns the job; the session's end returns it to ready).
//
// The wait after sending is bounded without a timer per call: a batch's context ends at the
// earliest due time of its calls, and calls are queued in order with the same timeout, so every
// batch a call waits behind ends before the call is due, and its own batch ends by then too.
//
// # Batches in flight
//
// Config.MaxInFlight allows more than one batch in flight, but a second goes out only for a
// single call beside batches of a single call, while batches have lately held single calls. A
// batch sends what queued while the one before was out in one round trip; under load that is
// what keeps a store's cost per call down, and a second batch in flight would only split those
// calls over more round trips (Redis: +12 % CPU per job for 1.05× the jobs/s at 16 connections).
// But a few sessions each waiting for its own reply, a producer and a worker, gain nothing from
// sharing: with one batch in flight they take turns, each call waiting for the other's round
// trip (cycle at 2 connections ran no faster than at one).
package batch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// ErrClosed answers the calls queued when Stop was called, and every call after it.
var ErrClosed = errors.New("backend closed")

// Config says how a Batcher runs and bounds its batches.
type Config[T, R any] struct {
	// Exec runs one batch: it sets results[i] (zero on entry) to the result of items[i], or
	// returns an error for the whole batch. Its ctx ends at the earliest due time of the batch's
	// calls. Both slices are the Batcher's, reused for later batches: Exec keeps neither.
	Exec func(ctx context.Context, items []T, results []R) error
	// Size is about how many bytes an item adds to a batch, for MaxBytes; nil: items have no size.
	Size func(item T) int
	// MaxCalls bounds the calls in one batch, so that a burst does not delay the first callers
	// for long.
	MaxCalls int
	// MaxBytes bounds the Size of a batch's items (0: no bound), so that big items do not add up
	// to one huge command; a lone call always goes, however big.
	MaxBytes int
	// MaxInFlight is how many batches may be in flight at once (see the package doc); 1 if less.
	MaxInFlight int
	// Timeout bounds each call from when it is queued; it must be positive.
	Timeout time.Duration
}

// Batcher runs calls in batches. It is safe for concurrent use.
type Batcher[T, R any] struct {
	cfg Config[T, R]

	beforeSend func() // see SetBeforeSend

	mu       sync.Mutex
	queue    []*call[T, R]
	inFlight int // batches being sent or awaited, each by its leader
	flying   int // calls in those batches
	sizes    sizes
	closed   bool
	spare    []*frame[T, R] // frames of batches no longer in flight, for the next ones
}

// frame holds one batch's calls, items and results, reused from batch to batch: at most
// MaxInFlight are in use at once, so that a batch allocates nothing for its calls.
type frame[T, R any] struct {
	calls   []*call[T, R]
	items   []T
	results []R
}

// call is one queued call. wake is signalled when res/err are set (or the call fails at Stop)
// and when the call's goroutine must lead (lead set first): at most one of each, so its capacity
// of 2 never drops one. A call made leader may still be sent in another leader's batch before
// its goroutine runs; it then has both signals pending.
type call[T, R any] struct {
	ctx  context.Context
	item T
	size int
	res  R
	err  error
	due  time.Time // when it fails if it has not been answered: queued + timeout
	sent time.Time // when its batch was sent: the operation ran after it
	wake chan struct{}

	// Guarded by Batcher.mu.
	queued bool // in Batcher.queue
	lead   bool // this call's goroutine must send the next batch
}

// New returns a Batcher running batches with cfg.Exec.
func New[T, R any](cfg Config[T, R]) *Batcher[T, R] {
	if cfg.Timeout <= 0 {
		panic("batch: Config.Timeout must be positive") // every call would be due at once
	}
	cfg.MaxInFlight = max(cfg.MaxInFlight, 1)
	cfg.MaxCalls = max(cfg.MaxCalls, 1)
	return &Batcher[T, R]{cfg: cfg}
}

// SetBeforeSend makes every leader run f before it takes the queue, so that a test can hold a
// batch back while other calls queue up behind it, or widen the window between being handed a
// slot and sending. f is read without a lock: set it before the calls it is to see.
func (b *Batcher[T, R]) SetBeforeSend(f func()) { b.beforeSend = f }

// Do runs item in a batch and returns its result: see the package doc for when a call whose
// context ends is withdrawn and when it is waited for.
func (b *Batcher[T, R]) Do(ctx context.Context, item T) (R, error) {
	res, _, err := b.DoSent(ctx, item)
	return res, err
}

// DoSent is Do that also returns when the call's batch was sent (zero if it was not): the
// operation ran after that, however long its reply then took to come back.
func (b *Batcher[T, R]) DoSent(ctx context.Context, item T) (R, time.Time, error) {
	if err := ctx.Err(); err != nil {
		var zero R
		return zero, time.Time{}, err
	}
	c := b.newCall(ctx, item, time.Now())
	if !b.enqueue(c) {
		var zero R
		return zero, time.Time{}, ErrClosed
	}
	return b.await(ctx, c)
}

// DoAll runs items as that many calls of Do in turn would, but queued at once, in order: they go
// out together in one batch, or in consecutive ones beyond MaxCalls. res[i] and errs[i] (as
// long as items) get each one's result or error, with Do's rules for a context that ends.
func (b *Batcher[T, R]) DoAll(ctx context.Context, items []T, res []R, errs []error) {
	fail := func(err error) {
		for i := range errs {
			errs[i] = err
		}
	}
	if err := ctx.Err(); err != nil {
		fail(err)
		return
	}
	now := time.Now()
	calls := make([]*call[T, R], len(items))
	for i, item := range items {
		calls[i] = b.newCall(ctx, item, now)
	}
	if !b.enqueue(calls...) {
		fail(ErrClosed)
		return
	}
	// In order: a later call made leader waits (its signal kept) until its turn, and by then
	// every earlier one has been sent or leads itself, since a slot goes to the first call
	// queued.
	for i, c := range calls {
		res[i], _, errs[i] = b.await(ctx, c)
	}
}

func (b *Batcher[T, R]) newCall(ctx context.Context, item T, now time.Time) *call[T, R] {
	c := &call[T, R]{ctx: ctx, item: item, due: now.Add(b.cfg.Timeout), wake: make(chan struct{}, 2)}
	if b.cfg.Size != nil {
		c.size = b.cfg.Size(item)
	}
	return c
}

// enqueue queues calls, in order, and sends a batch of them at once if the queue may go out
// now; false if the Batcher is stopped.
func (b *Batcher[T, R]) enqueue(calls ...*call[T, R]) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	for _, c := range calls {
		c.queued = true
	}
	b.queue = append(b.queue, calls...)
	lead := b.mayLeadLocked()
	if lead {
		b.inFlight++
	}
	b.mu.Unlock()
	if lead {
		b.send()
	}
	return true
}

// await waits for queued call c's result, leading a batch whenever it is handed a slot; a call
// whose context ends while it is queued is withdrawn (see the package doc).
func (b *Batcher[T, R]) await(ctx context.Context, c *call[T, R]) (R, time.Time, error) {
	done := ctx.Done()
	for {
		select {
		case <-c.wake:
		case <-done:
			b.mu.Lock()
			if c.queued && !c.lead {
				b.queue = slices.DeleteFunc(b.queue, func(q *call[T, R]) bool { return q == c })
				b.mu.Unlock()
				var zero R
				return zero, time.Time{}, ctx.Err()
			}
			b.mu.Unlock()
			done = nil // sent, or about to lead: wait for it (bounded by its due time)
			continue
		}
		b.mu.Lock()
		lead := c.lead
		c.lead = false
		b.mu.Unlock()
		if !lead {
			return c.res, c.sent, c.err
		}
		b.send()
	}
}

// send is run by the leader: it sends the queue (up to MaxCalls calls and MaxBytes) as one
// batch, then hands its slot to a queued call not yet made leader, or gives it back.
func (b *Batcher[T, R]) send() {
	if b.beforeSend != nil {
		b.beforeSend()
	}
	b.mu.Lock()
	f := b.frameLocked()
	n := b.batchLen()
	f.calls = append(f.calls[:0], b.queue[:n]...)
	b.queue = slices.Delete(b.queue, 0, n)
	sent := time.Now()
	for _, c := range f.calls {
		c.queued = false
		c.sent = sent
	}
	b.flying += n
	b.sizes.sent(n)
	b.mu.Unlock()

	b.exec(f)

	b.mu.Lock()
	b.spare = append(b.spare, f)
	b.flying -= n
	b.inFlight--
	if !b.closed && len(b.queue) > 0 && b.mayLeadLocked() {
		// Hand the slot to a queued call not already made leader: both slots' leaders may
		// finish before the first one handed a slot has run, and a call leads only once, so
		// handing it a second slot would lose that slot for good. A queue that may not go out
		// now goes with the hand-off of the batch still in flight.
		for _, next := range b.queue {
			if !next.lead {
				next.lead = true
				b.inFlight++
				b.mu.Unlock()
				signal(next.wake)
				return
			}
		}
	}
	b.mu.Unlock()
}

// frameLocked takes a spare frame, or makes one.
func (b *Batcher[T, R]) frameLocked() *frame[T, R] {
	if n := len(b.spare); n > 0 {
		f := b.spare[n-1]
		b.spare = b.spare[:n-1]
		return f
	}
	return &frame[T, R]{}
}

// mayLeadLocked reports whether the queue may go out as a batch now.
func (b *Batcher[T, R]) mayLeadLocked() bool {
	return b.sizes.mayAdd(b.inFlight, b.flying, len(b.queue), b.cfg.MaxInFlight)
}

// batchLen is how many calls from the head of the queue go into the next batch: at most
// MaxCalls, and no more than MaxBytes unless the first call alone is bigger.
func (b *Batcher[T, R]) batchLen() int {
	n, size := 0, 0
	for n < len(b.queue) && n < b.cfg.MaxCalls && (n == 0 || b.cfg.MaxBytes <= 0 || size+b.queue[n].size <= b.cfg.MaxBytes) {
		size += b.queue[n].size
		n++
	}
	return n
}

// Stop fails every call still queued and makes later ones fail at once, with ErrClosed; batches
// in flight finish (bounded by their calls' timeout).
func (b *Batcher[T, R]) Stop() {
	b.mu.Lock()
	b.closed = true
	queued := b.queue
	b.queue = nil
	for _, c := range queued {
		c.queued, c.lead = false, false
		c.err = ErrClosed
	}
	b.mu.Unlock()
	for _, c := range queued {
		signal(c.wake)
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// exec runs the batch in f, bounded by the earliest due time of its calls, and sets every
// call's result. Calls whose caller already gave up, or that are due already, are not sent:
// nobody would hear of them. f is left empty, holding no item or result.
func (b *Batcher[T, R]) exec(f *frame[T, R]) {
	live := f.calls[:0] // filtered in place
	var due time.Time
	now := time.Now()
	for _, c := range f.calls {
		err := c.ctx.Err()
		if err == nil && !now.Before(c.due) {
			err = context.DeadlineExceeded
		}
		if err != nil {
			c.err = err
			signal(c.wake)
			continue
		}
		if due.IsZero() || c.due.Before(due) {
			due = c.due
		}
		live = append(live, c)
	}
	clear(f.calls[len(live):])
	f.calls = live
	if len(live) > 0 {
		f.items = f.items[:0]
		for _, c := range live {
			f.items = append(f.items, c.item)
		}
		f.results = slices.Grow(f.results[:0], len(live))[:len(live)]
		ctx, cancel := context.WithDeadline(context.Background(), due)
		err := b.cfg.Exec(ctx, f.items, f.results)
		cancel()
		for i, c := range live {
			if err != nil {
				c.err = err
			} else {
				c.res = f.results[i]
			}
			signal(c.wake)
		}
	}
	// Nothing of this batch stays reachable from the frame (job bodies, replies).
	clear(f.calls)
	clear(f.items)
	clear(f.results)
	f.calls, f.items, f.results = f.calls[:0], f.items[:0], f.results[:0]
}
