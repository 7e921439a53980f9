package redis

import (
	"context"
	"slices"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// maxBatch bounds one pipeline, so that a burst does not delay the first callers for long.
const maxBatch = 256

// batcher coalesces function calls from many sessions into pipelines: while maxInFlight
// pipelines are out, calls queue up and go out together in the next one. With N sessions
// active that is about one Redis round trip per N commands, and Redis reads and writes them in
// one syscall.
//
// There are no worker goroutines: a caller that finds a free pipeline slot sends the queue
// itself (it leads), and when its pipeline is answered it hands the slot to the first caller
// still queued, which is woken for its result anyway. So a lone caller talks to Redis from its
// own goroutine, with no hand-off to another goroutine and back, and none waits for a timer.
type batcher struct {
	client      goredis.UniversalClient
	lib         *scripts      // reloaded when Redis has lost it
	keys        []string      // KEYS of every call (the same for all: see Backend.keys)
	timeout     time.Duration // bounds each pipeline
	maxInFlight int

	beforeSend func() // tests: widen the window between being handed a slot and sending

	mu       sync.Mutex
	queue    []*scriptCall
	inFlight int // pipelines being sent or awaited, each by its leader
	closed   bool
}

// scriptCall is one queued FCALL. wake is signalled when res/err are set (or the call fails at
// stop) and when the call's goroutine must lead (lead set first): at most one of each, so its
// capacity of 2 never drops one. A call made leader may still be sent in another leader's
// pipeline before its goroutine runs; it then has both signals pending.
type scriptCall struct {
	ctx  context.Context
	fn   fn
	args []any
	res  any
	err  error
	wake chan struct{}

	// Guarded by batcher.mu.
	queued bool // in batcher.queue
	lead   bool // this call's goroutine must send the next pipeline
}

func newBatcher(client goredis.UniversalClient, lib *scripts, keys []string, maxInFlight int, timeout time.Duration) *batcher {
	return &batcher{client: client, lib: lib, keys: keys, timeout: timeout, maxInFlight: maxInFlight}
}

// run queues a call and waits for its result or for ctx to end. A call already sent is always
// waited for, so that a state change that happened is never lost.
func (b *batcher) run(ctx context.Context, f fn, args ...any) (any, error) {
	c := &scriptCall{ctx: ctx, fn: f, args: args, wake: make(chan struct{}, 2)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errClosed
	}
	c.queued = true
	b.queue = append(b.queue, c)
	lead := b.inFlight < b.maxInFlight
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
				return nil, ctx.Err()
			}
			b.mu.Unlock()
			done = nil // sent, or about to lead: wait for it (bounded by the pipeline timeout)
			continue
		}
		b.mu.Lock()
		lead := c.lead
		c.lead = false
		b.mu.Unlock()
		if !lead {
			return c.res, c.err
		}
		b.send()
	}
}

// send is run by the leader: it sends the queue (up to maxBatch) as one pipeline, then hands
// its slot to a queued call not yet made leader, or gives it back.
func (b *batcher) send() {
	if b.beforeSend != nil {
		b.beforeSend()
	}
	b.mu.Lock()
	n := min(len(b.queue), maxBatch)
	batch := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	for _, c := range batch {
		c.queued = false
	}
	b.mu.Unlock()

	b.exec(batch)

	b.mu.Lock()
	if !b.closed {
		// Hand the slot to a queued call not already made leader: both slots' leaders may
		// finish before the first one handed a slot has run, and a call leads only once, so
		// handing it a second slot would lose that slot for good.
		for _, next := range b.queue {
			if !next.lead {
				next.lead = true
				b.mu.Unlock()
				signal(next.wake)
				return
			}
		}
	}
	b.inFlight--
	b.mu.Unlock()
}

// stop fails every call still queued and makes later ones fail at once; pipelines in flight
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

// exec sends one pipeline of FCALLs and sets every call's result; when the server does not know
// the library (a restart without persistence, FUNCTION FLUSH) it is loaded again and those calls
// are retried once. Calls whose caller already gave up are not sent: nobody would hear of them.
func (b *batcher) exec(batch []*scriptCall) {
	live := batch[:0:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			signal(c.wake)
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	cmds := b.pipeline(ctx, live)
	var retry []*scriptCall
	for i, c := range live {
		if isFunctionNotFound(cmds[i].Err()) {
			retry = append(retry, c)
			continue
		}
		c.res, c.err = cmds[i].Result()
		signal(c.wake)
	}
	if len(retry) == 0 {
		return
	}
	if err := b.lib.load(ctx, b.client); err != nil {
		for _, c := range retry {
			c.err = err
			signal(c.wake)
		}
		return
	}
	cmds = b.pipeline(ctx, retry)
	for i, c := range retry {
		c.res, c.err = cmds[i].Result()
		signal(c.wake)
	}
}

func (b *batcher) pipeline(ctx context.Context, calls []*scriptCall) []*goredis.Cmd {
	cmds := make([]*goredis.Cmd, len(calls))
	pipe := b.client.Pipeline()
	for i, c := range calls {
		cmds[i] = pipe.FCall(ctx, string(c.fn), b.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	return cmds
}
