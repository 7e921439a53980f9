package postgres

import "context"

// Ping runs an empty statement on a pooled connection (backend.Pinger).
func (b *Backend) Ping(ctx context.Context) error { return b.pool.Ping(ctx) }
