package redis

import (
	"context"

	"github.com/beangate/beangate/backend"
)

// StartReserve runs Reserve, which waits for the namespace's publishes, on a goroutine of its
// own.
func (b *Backend) StartReserve(ctx context.Context, p backend.ReserveParams, deliver func(*backend.Job, error)) (*backend.Job, backend.PendingReserve, error) {
	return backend.StartBlockingReserve(ctx, b.Reserve, p, deliver)
}

// InProcess is false: every call is a round trip to Redis.
func (b *Backend) InProcess() bool { return false }
