package postgres

import (
	"context"
	"net"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/rawconn"
)

// dialer makes the Backend's connections (the pool's, the listener's, the lease renewals' and
// pgx's cancel requests) and keeps track of them, so that a database found unreachable drops
// every one of them at once (dropConnections). pgx closes a connection whose statement ran out
// of time gracefully: it dials a cancel request to the server and waits up to 15 s for the old
// connection to drain, and the pool keeps that connection's slot meanwhile. Across a silent
// network cut that wait lasted until the cut healed and TCP's next retransmission, seconds
// later; so while the database is known unreachable new dials fail at once (but the probe's),
// and the connections open are closed outright.
type dialer struct {
	down func() bool // the database is known unreachable

	mu   sync.Mutex
	open map[*trackedConn]struct{}
}

type probeKey struct{}

// probing marks ctx as a probe's, whose dials go ahead while the database is unreachable.
func probing(ctx context.Context) context.Context { return context.WithValue(ctx, probeKey{}, true) }

// wrap makes cfg's dials go through d, with raw reads and writes (internal/rawconn: bookkept
// ones woke the runtime's monitor thread on every round trip of a gateway that had gone idle
// waiting for PostgreSQL). TLS, when the DSN asks for it, is pgx's, on top.
func (d *dialer) wrap(cfg *pgconn.Config) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if d.down != nil && d.down() && ctx.Value(probeKey{}) == nil {
			return nil, backend.ErrUnreachable
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: rawconn.Wrap(c), d: d}
		d.mu.Lock()
		if d.open == nil {
			d.open = map[*trackedConn]struct{}{}
		}
		d.open[tc] = struct{}{}
		d.mu.Unlock()
		return tc, nil
	}
}

// closeAll closes every connection open: whatever waits on one fails at once.
func (d *dialer) closeAll() {
	d.mu.Lock()
	open := d.open
	d.open = nil
	d.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	d *dialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.open, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
