package redis

import (
	"context"
	"strconv"

	"github.com/beangate/beangate/backend"
)

// A store that lost data (a Redis restart without AOF; with appendfsync everysec, the last
// second; a failover to a lagging replica) has lost the latest job ids with it, and its
// sequence would give them again: a client still holding one could then delete or touch a new,
// unrelated job. So each Backend remembers the highest id it has handed out (the floor: every id
// the store returned to it, for a put, a reserve, a peek or a stats-job), and the store's
// sequence is raised to it by each put through this Backend (in the same call) and by restore:
// at once when the subscription is made again after a reconnect (which any loss of data implies),
// and with every heartbeat. A put through another gateway that never saw those ids, in the moment
// between the store coming back and this Backend reconnecting, may still reuse one.

// saw raises the floor to id, which the store has just returned to this process.
func (b *Backend) saw(id uint64) {
	for {
		cur := b.floor.Load()
		if id <= cur || b.floor.CompareAndSwap(cur, id) {
			return
		}
	}
}

// sawJob is saw for a job the store returned (or its error, passed on).
func (b *Backend) sawJob(j *backend.Job, err error) (*backend.Job, error) {
	if j != nil {
		b.saw(j.ID)
	}
	return j, err
}

// floorArg is the floor as the scripts take it.
func (b *Backend) floorArg() string { return strconv.FormatUint(b.floor.Load(), 10) }

// restore puts back what the store may have forgotten and this Backend knows: the default tube
// and the floor (lua/restore.lua).
func (b *Backend) restore(ctx context.Context) error {
	if b.spread != nil {
		// The default tube, in its bucket. The floor is each put's (spread_id): a bucket's
		// sequence counts sequences, not ids.
		bk, err := b.firstBucket(ctx, backend.DefaultTube)
		if err != nil {
			return err
		}
		_, err = b.callIn(ctx, bk, opRestore, "0")
		return err
	}
	_, err := b.call(ctx, opRestore, b.floorArg())
	return err
}
