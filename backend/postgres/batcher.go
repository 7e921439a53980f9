package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// errBatchTimeout: the call was not answered within CommandTimeout (the database is slow or
// unreachable); whether it was committed is unknown, as with any timed-out command.
var errBatchTimeout = errors.New("not answered within the command timeout")

// batcher groups the calls that arrive while earlier ones are being written into one statement,
// one transaction and one WAL flush (group commit). Under no load a call runs at once; under load
// the queue that builds up during a commit becomes the next batch.
type batcher[T, R any] struct {
	calls   chan *call[T, R] // its capacity is the largest batch
	exec    func(ctx context.Context, items []T) ([]R, error)
	timeout time.Duration // a caller waits at most this long, queueing included
	stop    <-chan struct{}
	// abandoned, if set, receives the results that were committed for callers that had already
	// given up (to undo them: a reservation nobody will hear of).
	abandoned func(item T, res R)
}

// States of a call: the worker delivers it or finds its caller gone, whichever is first.
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

// newBatcher starts workers goroutines, each executing batches of at most max items, until stop
// closes. exec returns one result per item, in order, or an error for the whole batch.
func newBatcher[T, R any](exec func(context.Context, []T) ([]R, error), abandoned func(T, R), max, workers int, timeout time.Duration, stop <-chan struct{}) *batcher[T, R] {
	b := &batcher[T, R]{calls: make(chan *call[T, R], max), exec: exec, abandoned: abandoned, timeout: timeout, stop: stop}
	for range workers {
		go b.work()
	}
	return b
}

// do queues item and waits for its result. A caller giving up (ctx, timeout, Close) does not
// withdraw the item: like any command cut off mid-flight, it may still be committed (and is then
// passed to abandoned). A result the worker delivered before the caller gave up is returned.
func (b *batcher[T, R]) do(ctx context.Context, item T) (R, error) {
	var zero R
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, errBatchTimeout)
	defer cancel()
	c := &call[T, R]{item: item, done: make(chan struct{})}
	select {
	case b.calls <- c:
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	case <-b.stop:
		return zero, errClosed
	}
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

func (b *batcher[T, R]) work() {
	for {
		var first *call[T, R]
		select {
		case first = <-b.calls:
		case <-b.stop:
			b.failQueued()
			return
		}
		batch := []*call[T, R]{first}
	fill:
		for len(batch) < cap(b.calls) {
			select {
			case c := <-b.calls:
				batch = append(batch, c)
			default:
				break fill
			}
		}
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
}

// failQueued answers the calls still queued at Close.
func (b *batcher[T, R]) failQueued() {
	for {
		select {
		case c := <-b.calls:
			c.err = errClosed
			c.state.CompareAndSwap(callPending, callDelivered)
			close(c.done)
		default:
			return
		}
	}
}
