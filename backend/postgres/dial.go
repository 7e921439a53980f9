package postgres

import (
	"context"
	"net"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/beangate/beangate/backend/rawconn"
)

// rawDial makes the reads and writes of cfg's connections raw system calls (backend/rawconn):
// bookkept ones woke the runtime's monitor thread on every round trip of a gateway that had
// gone idle waiting for PostgreSQL. TLS, when the DSN asks for it, is pgx's, on top.
func rawDial(cfg *pgconn.Config) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rawconn.Wrap(c), nil
	}
}
