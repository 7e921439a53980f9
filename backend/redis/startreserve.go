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

// ObserveLostReservations does nothing: a reserve is committed as durably as a put (the same
// AOF, and the same WAIT with Options.WaitReplicas: see wait.go), so no failover forgets a
// reservation and keeps the puts and deletes that followed it.
func (b *Backend) ObserveLostReservations(func([]backend.SessionID)) {}
