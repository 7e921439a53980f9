package redis

import (
	"context"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// bucketWakeups is how the waiting reserves of the spread layout hear of jobs that may have
// become reservable in their buckets: a script publishes the tube on its bucket's channel
// {prefix:b}:ready (notify, in lib.lua), and the subscription hands each payload to the
// waiters (listen, in notify.go). subscribe is called before a reserve counts itself waiting in
// buckets, so that no publish after it is missed.
type bucketWakeups interface {
	subscribe(ctx context.Context, buckets []int) error
}

// patternWakeups is the provisional bucketWakeups: one classic pattern subscription to every
// bucket channel of the namespace. A cluster broadcasts a classic PUBLISH to every node, so one
// subscription on any node hears every bucket, at the cost of each node's CPU per message that
// sharded pub/sub (SPUBLISH, one SSUBSCRIBE per master) does not pay.
type patternWakeups struct{}

func (patternWakeups) subscribe(context.Context, []int) error { return nil }

// spreadSubscribe subscribes to every bucket channel of the namespace (patternWakeups). Its
// messages and its (re)subscriptions are handled by listen as the one-slot layout's.
func (b *Backend) spreadSubscribe(ctx context.Context) *goredis.PubSub {
	b.spread.wakeups = patternWakeups{}
	return b.client.PSubscribe(ctx, "{"+globEscape(b.spread.prefix)+":*}:ready")
}

// globEscape quotes the characters special to a PSUBSCRIBE pattern.
func globEscape(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
