package redis

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// maxBatch bounds one pipeline, so that a burst does not delay the first callers for long.
const maxBatch = 256

// batcher coalesces script calls from many sessions into pipelines: while one pipeline is in
// flight, calls queue up and go out together in the next one. With N sessions active that is
// about one Redis round trip per N commands, and Redis reads and writes them in one syscall.
type batcher struct {
	client  goredis.UniversalClient
	lib     *scripts      // reloaded when Redis has lost it
	timeout time.Duration // bounds each pipeline
	in      chan *scriptCall
	quit    chan struct{}
	wg      sync.WaitGroup
}

// Call states: a queued call is either sent (then its caller waits for the result, so that a
// state change that happened is never lost) or abandoned by its caller before being sent.
const (
	callQueued int32 = iota
	callSent
	callAbandoned
)

// scriptCall is one queued FCALL; done is closed once res/err are set.
type scriptCall struct {
	state atomic.Int32
	ctx   context.Context
	fn    fn
	keys  []string
	args  []any
	res   any
	err   error
	done  chan struct{}
}

// newBatcher starts workers goroutines, each sending one pipeline at a time.
func newBatcher(client goredis.UniversalClient, lib *scripts, workers int, timeout time.Duration) *batcher {
	b := &batcher{client: client, lib: lib, timeout: timeout, in: make(chan *scriptCall, maxBatch), quit: make(chan struct{})}
	for range workers {
		b.wg.Add(1)
		go b.loop()
	}
	return b
}

// run queues a call and waits for its result or for ctx to end.
func (b *batcher) run(ctx context.Context, f fn, keys []string, args ...any) (any, error) {
	c := &scriptCall{ctx: ctx, fn: f, keys: keys, args: args, done: make(chan struct{})}
	select {
	case b.in <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.quit:
		return nil, errClosed
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return nil, ctx.Err()
		}
		<-c.done // already sent: bounded by the pipeline's own timeout
	case <-b.quit:
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return nil, errClosed // queued after the workers stopped
		}
		<-c.done
	}
	return c.res, c.err
}

func (b *batcher) stop() {
	close(b.quit)
	b.wg.Wait()
	// Fail whatever is still queued, so that no caller waits for its own timeout.
	for {
		select {
		case c := <-b.in:
			c.err = errClosed
			close(c.done)
		default:
			return
		}
	}
}

func (b *batcher) loop() {
	defer b.wg.Done()
	batch := make([]*scriptCall, 0, maxBatch)
	for {
		batch = batch[:0]
		select {
		case c := <-b.in:
			batch = append(batch, c)
		case <-b.quit:
			return
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case c := <-b.in:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		b.exec(batch)
	}
}

// exec sends one pipeline of FCALLs; when the server does not know the library (a restart
// without persistence, FUNCTION FLUSH) it is loaded again and those calls are retried once.
func (b *batcher) exec(batch []*scriptCall) {
	live := batch[:0]
	for _, c := range batch {
		if c.ctx.Err() != nil || !c.state.CompareAndSwap(callQueued, callSent) {
			// The caller gave up: do not run a state change nobody will hear of.
			c.err = context.Canceled
			close(c.done)
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
		close(c.done)
	}
	if len(retry) == 0 {
		return
	}
	if err := b.lib.load(ctx, b.client); err != nil {
		for _, c := range retry {
			c.err = err
			close(c.done)
		}
		return
	}
	cmds = b.pipeline(ctx, retry)
	for i, c := range retry {
		c.res, c.err = cmds[i].Result()
		close(c.done)
	}
}

func (b *batcher) pipeline(ctx context.Context, calls []*scriptCall) []*goredis.Cmd {
	cmds := make([]*goredis.Cmd, len(calls))
	pipe := b.client.Pipeline()
	for i, c := range calls {
		cmds[i] = pipe.FCall(ctx, string(c.fn), c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	return cmds
}
