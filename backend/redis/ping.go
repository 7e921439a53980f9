package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// Ping asks Redis for PONG: on a cluster, every known master. While Redis is
// known unreachable it answers that at once (outage.go probes meanwhile).
func (b *Backend) Ping(ctx context.Context) error {
	if err := b.reach.Check(); err != nil {
		return opErr("ping", err)
	}
	return b.ping(ctx)
}

// ping asks Redis for PONG.
func (b *Backend) ping(ctx context.Context) error {
	if cc, ok := b.client.(interface {
		ForEachMaster(context.Context, func(context.Context, *goredis.Client) error) error
	}); ok {
		return opErr("ping", cc.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error { return c.Ping(ctx).Err() }))
	}
	return opErr("ping", b.client.Ping(ctx).Err())
}
