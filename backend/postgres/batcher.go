package postgres

import (
	"context"
	"errors"
	"time"
)

// errBatchTimeout: the write was not answered within CommandTimeout (the database is slow or
// unreachable); whether it was committed is unknown, as with any timed-out command.
var errBatchTimeout = errors.New("postgres: write not committed within the command timeout")

// batcher groups the calls that arrive while earlier ones are being written into one statement,
// one transaction and one WAL flush (group commit). Under no load a call runs at once; under load
// the queue that builds up during a commit becomes the next batch.
type batcher[T, R any] struct {
	calls   chan *call[T, R]
	exec    func(ctx context.Context, items []T) ([]R, error)
	max     int
	timeout time.Duration // a caller waits at most this long, queueing included
	stop    <-chan struct{}
}

type call[T, R any] struct {
	item T
	res  R
	err  error
	done chan struct{}
}

// newBatcher starts workers goroutines, each executing batches of at most max items, until stop
// closes. exec returns one result per item, in order, or an error for the whole batch.
func newBatcher[T, R any](exec func(context.Context, []T) ([]R, error), max, workers int, timeout time.Duration, stop <-chan struct{}) *batcher[T, R] {
	b := &batcher[T, R]{calls: make(chan *call[T, R], max), exec: exec, max: max, timeout: timeout, stop: stop}
	for range workers {
		go b.work()
	}
	return b
}

// do queues item and waits for its result. A caller giving up (ctx, timeout, Close) does not
// withdraw the item: like any command cut off mid-flight, it may still be committed.
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
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	case <-b.stop:
		return zero, errClosed
	}
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
		for len(batch) < b.max {
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
			close(c.done)
		default:
			return
		}
	}
}
