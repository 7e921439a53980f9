package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/internal/batch"
)

// Operations from all sessions go out in batches (internal/batch), each one FCALL of the
// library's batch function (lua/batch.lua), or of the operation's own function when it is alone.
// With N sessions active that is about one Redis round trip and one Redis command per N
// operations.
const (
	// maxBatch and maxBatchBytes bound one batch, so that a burst does not delay the first
	// callers for long, and so that big job bodies do not add up to one huge command (Redis
	// holds a command's arguments in memory all at once, up to client-query-buffer-limit). A
	// lone call is always sent, however big.
	maxBatch      = 256
	maxBatchBytes = 1 << 20
	// batchesInFlight is how many batches may be in flight at once: a second goes out only
	// beside a batch of a single call, for a single call, while batches lately held single
	// calls, so that a producer and a worker each have their own round trip. Under load calls
	// wait for the next batch, each batch costing a round trip's syscalls and wake-ups in the
	// gateway and in Redis whatever its size (two in flight under load: 1.05× the jobs/s for
	// +12 % Redis CPU per job, docs/benchmarks.md).
	batchesInFlight = 2
)

// opCall is one operation in a batch: its name, its ARGV[2] (now) and its own arguments, its
// ARGV[3..].
type opCall struct {
	op   op
	base string // the slot's base (ARGV[1]): the namespace's, or in the spread layout a bucket's
	now  string
	args []any
}

// opReply is one operation's reply: a nil reply (the operation returned false) is goredis.Nil,
// as from a lone FCALL; an error the operation raised is its own, the others still ran.
type opReply struct {
	v   any
	err error
}

func newBatcher(b *Backend) *batch.Batcher[opCall, opReply] {
	return batch.New(batch.Config[opCall, opReply]{
		Exec:        b.execBatch,
		Size:        func(c opCall) int { return argsSize(c.args) },
		MaxCalls:    maxBatch,
		MaxBytes:    maxBatchBytes,
		MaxInFlight: batchesInFlight,
		Timeout:     b.opts.CommandTimeout,
	})
}

// execBatch sends one batch and sets each call's reply. When the server does not know the
// library (a restart without persistence, FUNCTION FLUSH) it is loaded again and the batch, which
// did not run, is sent once more.
func (b *Backend) execBatch(ctx context.Context, calls []opCall, replies []opReply) error {
	if b.spread != nil {
		return b.execSpreadBatch(ctx, calls, replies) // spread_batch.go
	}
	return b.execOneBase(ctx, calls, replies)
}

// execOneBase is execBatch for calls that all go to one slot.
func (b *Backend) execOneBase(ctx context.Context, calls []opCall, replies []opReply) error {
	err := b.fcallBatch(ctx, calls, replies)
	if isFunctionNotFound(err) {
		if err = b.sc.load(ctx, b.client, b.keys[0]); err == nil {
			err = b.fcallBatch(ctx, calls, replies)
		}
	}
	return err
}

// fcallBatch runs calls as one FCALL of the batch function.
func (b *Backend) fcallBatch(ctx context.Context, calls []opCall, replies []opReply) error {
	if len(calls) == 1 {
		return b.fcallOne(ctx, calls, replies)
	}
	n := 1
	for _, c := range calls {
		n += 3 + len(c.args)
	}
	args := make([]any, 0, n)
	args = append(args, calls[0].base)
	for _, c := range calls {
		args = append(args, string(c.op), c.now, len(c.args))
		args = append(args, c.args...)
	}
	keys := b.keysOf(calls[0].base)
	cmd := fcallCmd(ctx, b.sc.batch, keys, args...)
	werr := b.process(ctx, cmd, b.mustWait(calls), keys[0])
	res, err := cmd.Result()
	if err != nil {
		return err
	}
	got, ok := res.([]any)
	if !ok || len(got) != len(calls) {
		return fmt.Errorf("batch of %d calls answered with %T of %d", len(calls), res, len(got))
	}
	for i, r := range got {
		switch r := r.(type) {
		case nil:
			replies[i].err = goredis.Nil
		case goredis.Error:
			replies[i].err = r
		default:
			replies[i].v = r
		}
	}
	failUnreplicated(calls, replies, werr)
	return nil
}

// fcallOne runs a lone call as an FCALL of its operation's own function: through the batch
// function it would cost Redis about 3 µs more (its argument table and pcall), all latency when
// one connection waits for each reply. Only a missing library fails it as a batch.
func (b *Backend) fcallOne(ctx context.Context, calls []opCall, replies []opReply) error {
	c := calls[0]
	args := make([]any, 0, 2+len(c.args))
	args = append(args, c.base, c.now)
	args = append(args, c.args...)
	keys := b.keysOf(c.base)
	cmd := fcallCmd(ctx, b.sc.fns[c.op], keys, args...)
	werr := b.process(ctx, cmd, b.mustWait(calls), keys[0])
	res, err := cmd.Result()
	if isFunctionNotFound(err) {
		return err
	}
	replies[0] = opReply{v: res, err: err}
	failUnreplicated(calls, replies, werr)
	return nil
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
