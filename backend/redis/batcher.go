package redis

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend/inflight"
)

// maxBatch and maxBatchBytes bound one batch, so that a burst does not delay the first callers
// for long, and so that big job bodies do not add up to one huge command (Redis holds a
// command's arguments in memory all at once, up to client-query-buffer-limit). A lone call is
// always sent, however big.
const (
	maxBatch      = 256
	maxBatchBytes = 1 << 20
)

// batcher coalesces operations from many sessions into batches, each sent as one FCALL of the
// library's batch function (lua/batch.lua), or of the operation's own function when it is
// alone: while a batch is out, calls queue up and go out together in the next one (a second,
// up to maxInFlight, only for a few sessions each alone in its batch: backend/inflight). With N
// sessions active that is about one Redis round trip and one Redis command per N operations.
//
// There are no worker goroutines: a caller that finds a free slot sends the queue itself (it
// leads), and when its batch is answered it hands the slot to the first caller still queued,
// which is woken for its result anyway. So a lone caller talks to Redis from its own
// goroutine, with no hand-off to another goroutine and back, and none waits for a timer.
type batcher struct {
	client      goredis.UniversalClient
	sc          *scripts      // the library; reloaded when Redis has lost it
	keys        []string      // KEYS of every call (the same for all: see Backend.keys)
	base        string        // ARGV[1] of every call
	timeout     time.Duration // bounds each call, from when it is queued
	maxInFlight int

	beforeSend func() // tests: widen the window between being handed a slot and sending
	sending    func() // tests: called with the batch formed, before it is sent

	mu       sync.Mutex
	queue    []*scriptCall
	inFlight int // batches being sent or awaited, each by its leader
	flying   int // calls in those batches
	sizes    inflight.Policy
	closed   bool
}

// scriptCall is one queued operation. wake is signalled when res/err are set (or the call fails
// at stop) and when the call's goroutine must lead (lead set first): at most one of each, so
// its capacity of 2 never drops one. A call made leader may still be sent in another leader's
// batch before its goroutine runs; it then has both signals pending.
type scriptCall struct {
	ctx   context.Context
	op    op
	now   string // the operation's ARGV[2]
	args  []any  // the operation's own arguments, its ARGV[3..]
	bytes int    // the arguments' size, roughly
	res   any
	err   error
	due   time.Time // when it fails if it has not been answered: queued + timeout
	sent  time.Time // when its batch was sent: the operation ran after it
	wake  chan struct{}

	// Guarded by batcher.mu.
	queued bool // in batcher.queue
	lead   bool // this call's goroutine must send the next batch
}

func newBatcher(client goredis.UniversalClient, sc *scripts, keys []string, base string, maxInFlight int, timeout time.Duration) *batcher {
	return &batcher{client: client, sc: sc, keys: keys, base: base, timeout: timeout, maxInFlight: maxInFlight}
}

// runSent queues a call and waits for its result or for ctx to end. A call already sent is
// always waited for, so that a state change that happened is never lost. It also returns when
// the call's batch was sent (zero if it was not): the operation ran after that, however long
// its reply then took to come back.
//
// The batcher's timeout bounds the call without a timer of its own: a batch is given the
// earliest due time of its calls, so the batch a call waits for (sent before it was queued)
// ends before the call is due, and the call's own batch ends by then too.
func (b *batcher) runSent(ctx context.Context, o op, now string, args ...any) (any, time.Time, error) {
	c := &scriptCall{ctx: ctx, op: o, now: now, args: args, bytes: argsSize(args), wake: make(chan struct{}, 2)}
	c.due = time.Now().Add(b.timeout)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, time.Time{}, errClosed
	}
	c.queued = true
	b.queue = append(b.queue, c)
	lead := b.mayLeadLocked()
	if lead {
		b.inFlight++
	}
	b.mu.Unlock()
	if lead {
		b.send()
	}
	done := ctx.Done()
	for {
		select {
		case <-c.wake:
		case <-done:
			b.mu.Lock()
			if c.queued && !c.lead {
				b.queue = slices.DeleteFunc(b.queue, func(q *scriptCall) bool { return q == c })
				b.mu.Unlock()
				return nil, time.Time{}, ctx.Err()
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

// send is run by the leader: it sends the queue (up to maxBatch calls and maxBatchBytes) as one
// batch, then hands its slot to a queued call not yet made leader, or gives it back.
func (b *batcher) send() {
	if b.beforeSend != nil {
		b.beforeSend()
	}
	b.mu.Lock()
	n := batchLen(b.queue)
	batch := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	sent := time.Now()
	for _, c := range batch {
		c.queued = false
		c.sent = sent
	}
	b.flying += len(batch)
	b.sizes.Sent(len(batch))
	b.mu.Unlock()

	if b.sending != nil {
		b.sending()
	}
	b.exec(batch)

	b.mu.Lock()
	b.flying -= len(batch)
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

// mayLeadLocked reports whether the queue may go out as a batch now (inflight.Policy: beside a
// batch in flight only for a few sessions each waiting for its own reply).
func (b *batcher) mayLeadLocked() bool {
	return b.sizes.MayAdd(b.inFlight, b.flying, len(b.queue), b.maxInFlight)
}

// stop fails every call still queued and makes later ones fail at once; batches in flight
// finish (bounded by their timeout).
func (b *batcher) stop() {
	b.mu.Lock()
	b.closed = true
	queued := b.queue
	b.queue = nil
	for _, c := range queued {
		c.queued, c.lead = false, false
		c.err = errClosed
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

// exec sends one batch, bounded by the earliest due time of its calls, and sets every call's
// result; when the server does not know the library (a restart without persistence, FUNCTION
// FLUSH) it is loaded again and the batch, which did not run, is sent once more. Calls whose
// caller already gave up, or that are due already, are not sent: nobody would hear of them.
func (b *batcher) exec(batch []*scriptCall) {
	live := batch[:0] // batch is the leader's own copy (see send): filtered in place
	var due time.Time
	now := time.Now()
	for _, c := range batch {
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
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(context.Background(), due)
	defer cancel()
	err := b.fcall(ctx, live)
	if isFunctionNotFound(err) {
		if err = b.sc.load(ctx, b.client, b.keys[0]); err == nil {
			err = b.fcall(ctx, live)
		}
	}
	if err != nil {
		for _, c := range live {
			c.err = err
			signal(c.wake)
		}
	}
}

// fcall runs calls as one FCALL of the batch function and, if it answers, sets and signals
// each call's result: a nil reply (the operation returned false) is goredis.Nil, as from a
// lone FCALL. An error means no call's result was set.
func (b *batcher) fcall(ctx context.Context, calls []*scriptCall) error {
	if len(calls) == 1 {
		return b.fcallOne(ctx, calls[0])
	}
	n := 1
	for _, c := range calls {
		n += 3 + len(c.args)
	}
	args := make([]any, 0, n)
	args = append(args, b.base)
	for _, c := range calls {
		args = append(args, string(c.op), c.now, len(c.args))
		args = append(args, c.args...)
	}
	res, err := fcall(ctx, b.client, b.sc.batch, b.keys, args...)
	if err != nil {
		return err
	}
	replies, ok := res.([]any)
	if !ok || len(replies) != len(calls) {
		return fmt.Errorf("batch of %d calls answered with %T of %d", len(calls), res, len(replies))
	}
	for i, c := range calls {
		switch r := replies[i].(type) {
		case nil:
			c.err = goredis.Nil
		case goredis.Error:
			c.err = r
		default:
			c.res = r
		}
		signal(c.wake)
	}
	return nil
}

// fcallOne runs a lone call as an FCALL of its operation's own function: through the batch
// function it would cost Redis about 3 µs more (its argument table and pcall), all latency when
// one connection waits for each reply. An error means the call's result was not set.
func (b *batcher) fcallOne(ctx context.Context, c *scriptCall) error {
	args := make([]any, 0, 2+len(c.args))
	args = append(args, b.base, c.now)
	args = append(args, c.args...)
	res, err := fcall(ctx, b.client, b.sc.fns[c.op], b.keys, args...)
	if isFunctionNotFound(err) {
		return err
	}
	c.res, c.err = res, err
	signal(c.wake)
	return nil
}

// batchLen is how many calls from the head of queue go into the next batch: at most maxBatch,
// and no more than maxBatchBytes of arguments unless the first call alone is bigger.
func batchLen(queue []*scriptCall) int {
	n, size := 0, 0
	for n < len(queue) && n < maxBatch && (n == 0 || size+queue[n].bytes <= maxBatchBytes) {
		size += queue[n].bytes
		n++
	}
	return n
}

// argsSize is about how many bytes args take in a command.
func argsSize(args []any) int {
	n := 0
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		default:
			n += 8
		}
	}
	return n
}
