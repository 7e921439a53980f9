package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Ping runs an empty statement on a pooled connection. While the database is
// known unreachable it answers that at once, leaving the pool alone: a connection it began
// would wait out its connect timeout, and hold a slot of the pool all that while.
func (b *Backend) Ping(ctx context.Context) error {
	if err := b.reach.Check(); err != nil {
		return opErr("ping", err)
	}
	return opErr("ping", b.pool.Ping(ctx))
}

// probe connects anew, outside the pool, to the server of the URL that accepts writes: how the
// database is found reachable again (outage.go). A connection of its own is dropped with the
// probe's context, where one the pool began would go on connecting in the background.
func (b *Backend) probe(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(probing(ctx), b.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}
