package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// errBatchTimeout: the call was not answered within CommandTimeout (the database is slow or
// unreachable); whether it was committed is unknown, as with any timed-out command.
var errBatchTimeout = errors.New("not answered within the command timeout")

// batcher groups the calls that arrive while an earlier batch is in flight into one statement,
// one transaction and one WAL flush (group commit); one batch is in flight at a time. A call that
// finds nothing in flight runs at once, on its caller's goroutine: no hand-over to another
// goroutine and back, which costs two wake-ups per call when calls come one at a time. The calls
// that queue up meanwhile become the next batch, run by a goroutine started for them, which goes
// on with the batch after that until the queue is empty.
type batcher[T, R any] struct {
	exec    func(ctx context.Context, items []T) ([]R, error)
	max     int           // the largest batch
	timeout time.Duration // a caller waits at most this long, queueing included
	stop    <-chan struct{}
	// abandoned, if set, receives the results that were committed for callers that had already
	// given up (to undo them: a reservation nobody will hear of).
	abandoned func(item T, res R)

	mu       sync.Mutex
	queue    []*call[T, R]
	inFlight bool // a batch is being executed; queued calls wait for the next one
}

// States of a call: the batch delivers it or finds its caller gone, whichever is first.
const (
	callPending int32 = iota
	callDelivered
	callAbandoned
)

type call[T, R any] struct {
	item  T
	res   R
	err   error
	state atomic.Int32
	done  chan struct{}
}

// newBatcher returns a batcher executing batches of at most max items until stop closes. exec
// returns one result per item, in order, or an error for the whole batch.
func newBatcher[T, R any](exec func(context.Context, []T) ([]R, error), abandoned func(T, R), max int, timeout time.Duration, stop <-chan struct{}) *batcher[T, R] {
	return &batcher[T, R]{exec: exec, abandoned: abandoned, max: max, timeout: timeout, stop: stop}
}

// do runs item in a batch and waits for its result. A caller giving up (ctx, timeout, Close)
// while its item is queued does not withdraw it: like any command cut off mid-flight, it may
// still be committed (and is then passed to abandoned). A result delivered before the caller gave
// up is returned. A call that finds no batch in flight runs its batch itself and is answered as
// if it had been queued: a caller whose ctx ended meanwhile gets that error.
func (b *batcher[T, R]) do(ctx context.Context, item T) (R, error) {
	var zero R
	select {
	case <-b.stop:
		return zero, errClosed
	default:
	}
	if ctx.Err() != nil {
		return zero, context.Cause(ctx)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, errBatchTimeout)
	defer cancel()
	c := &call[T, R]{item: item, done: make(chan struct{})}
	b.mu.Lock()
	if !b.inFlight {
		b.inFlight = true
		b.mu.Unlock()
		b.execute([]*call[T, R]{c})
		b.next()
		if ctx.Err() != nil { // gone meanwhile, as if it had been queued
			if c.err == nil && b.abandoned != nil {
				b.abandoned(c.item, c.res)
			}
			return zero, context.Cause(ctx)
		}
		return c.res, c.err
	}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	return b.await(ctx, c)
}

// doAll runs items as consecutive calls of do would, in order, and waits for all of them: they
// join one batch (or consecutive ones) as calls that arrived together do. Each gets its own
// result or error in res and errs (len(items) each), with do's rules for a caller giving up.
func (b *batcher[T, R]) doAll(ctx context.Context, items []T, res []R, errs []error) {
	select {
	case <-b.stop:
		fillErr(errs, errClosed)
		return
	default:
	}
	if ctx.Err() != nil {
		fillErr(errs, context.Cause(ctx))
		return
	}
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, errBatchTimeout)
	defer cancel()
	calls := make([]*call[T, R], len(items))
	for i, item := range items {
		calls[i] = &call[T, R]{item: item, done: make(chan struct{})}
	}
	b.mu.Lock()
	if !b.inFlight {
		b.inFlight = true
		n := min(len(calls), b.max)
		b.queue = append(b.queue, calls[n:]...)
		b.mu.Unlock()
		b.execute(calls[:n])
		b.next()
	} else {
		b.queue = append(b.queue, calls...)
		b.mu.Unlock()
	}
	for i, c := range calls {
		res[i], errs[i] = b.await(ctx, c)
	}
}

func fillErr(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}

// await is do's wait for a queued call c: its result, or ctx's end (the call is then abandoned
// unless it was delivered meanwhile).
func (b *batcher[T, R]) await(ctx context.Context, c *call[T, R]) (R, error) {
	var zero R
	var err error
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-b.stop:
		err = errClosed
	}
	if c.state.CompareAndSwap(callPending, callAbandoned) {
		return zero, err
	}
	<-c.done // delivered just now
	return c.res, c.err
}

// next ends the batch in flight: the calls queued meanwhile go to a goroutine of their own.
func (b *batcher[T, R]) next() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.inFlight = false
		return
	}
	go b.drain()
}

// drain executes the queued calls, a batch at a time, until none is left.
func (b *batcher[T, R]) drain() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.inFlight = false
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), b.max)
		batch := slices.Clone(b.queue[:n])
		b.queue = append(b.queue[:0], b.queue[n:]...)
		b.mu.Unlock()
		b.execute(batch)
	}
}

// execute runs one batch and delivers every call's result. A batch runs to its end even after
// Close (exec fails at once then) or after its callers gave up.
func (b *batcher[T, R]) execute(batch []*call[T, R]) {
	items := make([]T, len(batch))
	for i, c := range batch {
		items[i] = c.item
	}
	res, err := b.exec(context.Background(), items)
	for i, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.res = res[i]
		}
		if !c.state.CompareAndSwap(callPending, callDelivered) && err == nil && b.abandoned != nil {
			b.abandoned(c.item, c.res)
		}
		close(c.done)
	}
}
