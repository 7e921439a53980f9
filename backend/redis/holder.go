package redis

import (
	"cmp"
	"context"

	"github.com/beangate/beangate/backend"
)

// JobHolder reads the job hash: its state ("s") and owner ("o").
// One read, no script, and no time applied: the deadline is in Redis's clock, not this host's,
// so a reservation past its deadline that no call has returned yet still names its holder
// (read JobStats first, which applies time, as the console does).
func (b *Backend) JobHolder(ctx context.Context, id uint64) (backend.SessionID, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	defer cancel()
	base := b.base
	if b.spread != nil {
		base = b.spread.base(jobBucket(id))
	}
	f, err := b.client.HMGet(ctx, base+":j:"+padID(id), "s", "o").Result()
	if err != nil {
		return "", opErr("job holder", err)
	}
	state, _ := f[0].(string)
	if state == "" && b.spread != nil {
		// An imported id: its job is where its forwarding entry says (spread_import.go).
		to, ok, err := b.forwarded(ctx, id)
		if err != nil || !ok {
			return "", cmp.Or(err, backend.ErrNotFound)
		}
		if f, err = b.client.HMGet(ctx, b.spread.base(to)+":j:"+padID(id), "s", "o").Result(); err != nil {
			return "", opErr("job holder", err)
		}
		state, _ = f[0].(string)
	}
	if state == "" {
		return "", backend.ErrNotFound
	}
	owner, _ := f[1].(string)
	if state != "reserved" || owner == "" {
		return "", nil
	}
	return backend.SessionID(owner), nil
}
