package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// A namespace's layout (Options.Layout) is recorded in its home slot when it is made, as the
// hash {prefix}:layout (layout, buckets, v), so that gateways whose URLs disagree cannot run
// both layouts on one namespace: the spread layout's keys are not where the one-slot layout's
// scripts look, and each would see an empty queue. A one-slot namespace has no record (it
// predates it); the spread layout writes its record before anything else.

// layoutVersion is the spread layout's format, for a future change of it.
const layoutVersion = "1"

// errLayoutMismatch is New's error when the URL asks for another layout than the namespace's.
var errLayoutMismatch = errors.New("redis: the namespace was made with another layout")

// checkLayout reads the namespace's layout record, writes it if this Backend makes a spread
// namespace, and refuses a mismatch (backend.ErrBadOptions: a configuration mistake).
func (b *Backend) checkLayout(ctx context.Context) error {
	key := b.base + ":layout"
	got, err := b.client.HGet(ctx, key, "layout").Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return opErr("reading the layout record", err)
	}
	if b.opts.Layout == LayoutOneSlot {
		if got != "" {
			return backend.BadOptions(fmt.Errorf("%w: it is %q, the URL asks for one slot (add layout=%s)", errLayoutMismatch, got, got))
		}
		return nil
	}
	if got == "" {
		// A namespace made by the one-slot layout has its id sequence or its tubes in the home
		// slot; the spread layout keeps neither there.
		n, err := b.client.Exists(ctx, b.base+":ids", b.base+":tubes").Result()
		if err != nil {
			return opErr("reading the layout record", err)
		}
		if n > 0 {
			return backend.BadOptions(fmt.Errorf("%w: it holds one-slot data, the URL asks for layout=%s (move it with beangate migrate)", errLayoutMismatch, b.opts.Layout))
		}
		if err := b.client.HSetNX(ctx, key, "layout", b.opts.Layout).Err(); err != nil {
			return opErr("writing the layout record", err)
		}
		if err := b.client.HSet(ctx, key, "buckets", spreadBuckets, "v", layoutVersion).Err(); err != nil {
			return opErr("writing the layout record", err)
		}
		if got, err = b.client.HGet(ctx, key, "layout").Result(); err != nil {
			return opErr("reading the layout record", err)
		}
	}
	if got != b.opts.Layout {
		return backend.BadOptions(fmt.Errorf("%w: it is %q, the URL asks for layout=%s", errLayoutMismatch, got, b.opts.Layout))
	}
	return nil
}
