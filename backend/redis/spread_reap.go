package redis

import (
	"context"
	"strconv"
)

// spreadReap is Reap in the spread layout: the home slot decides which processes are dead
// (leases stay there), their sessions are ended in every bucket the process recorded
// ({prefix}:pb:<process>), and only then are the process's home records dropped, so that a
// reaper that fails midway leaves the rest to the next run.
func (b *Backend) spreadReap(ctx context.Context) error {
	res, err := b.call(ctx, opReapDead, ms(b.reapGrace()), ms(b.suspicionTTL()))
	if err != nil {
		return err
	}
	r := newReply(opReapDead, res)
	ended := int64(0)
	for i := 0; i+1 < len(r.a); {
		proc, n := r.str(i), int(r.int(i+1))
		buckets := make([]int, 0, n)
		for j := range n {
			bk, err := strconv.Atoi(r.str(i + 2 + j))
			if err == nil && bk >= 0 && bk < spreadBuckets {
				buckets = append(buckets, bk)
			}
		}
		i += 2 + n
		if r.err != nil {
			return r.err
		}
		done := true
		for _, rep := range b.fanOut(ctx, buckets, opReapSessions, func(int) []any { return []any{proc} }) {
			if rep.err != nil {
				done = false
				err = rep.err
				continue
			}
			k, _ := toInt(opReapSessions, rep.res)
			ended += k
		}
		if !done {
			continue
		}
		if _, err = b.call(ctx, opReapForget, proc); err != nil {
			continue
		}
		b.spread.mu.Lock()
		delete(b.spread.pb, proc)
		b.spread.mu.Unlock()
	}
	if ended > 0 {
		b.opts.Logger.Info("redis: ended sessions of dead gateways", "sessions", ended)
	}
	return err
}
