package postgres

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"

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
//
// It also tells when the server may have been lost, for the reservations committed there
// without waiting for the flush (durability.go): lost runs when a connection that was
// established breaks (not by a timeout, nor closed here, nor after pgx said goodbye on it), and
// when a new connection finds a server started at another time than the last one (restarted,
// or a standby promoted).
type dialer struct {
	down func() bool // the database is known unreachable
	lost func()      // the server may have crashed or been replaced

	mu     sync.Mutex
	open   map[*trackedConn]struct{}
	server string // the start time of the server the last connection reached
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
		c.closed.Store(true)
		_ = c.Conn.Close()
	}
}

// afterConnect chains next (may be nil) after the check of a new connection's server: one
// round trip per connection, none per statement. A connection that passes it is established:
// its breaking counts (a cancel request's connection, which the server closes, never is).
func (d *dialer) afterConnect(next pgconn.AfterConnectFunc) pgconn.AfterConnectFunc {
	return func(ctx context.Context, pc *pgconn.PgConn) error {
		rs, err := pc.Exec(ctx, "SELECT pg_postmaster_start_time()::text").ReadAll()
		if err != nil {
			return err
		}
		if len(rs) != 1 || len(rs[0].Rows) != 1 || len(rs[0].Rows[0]) != 1 {
			return errors.New("pg_postmaster_start_time() answered no row")
		}
		started := string(rs[0].Rows[0][0])
		d.mu.Lock()
		other := d.server != "" && d.server != started
		d.server = started
		d.mu.Unlock()
		if other && d.lost != nil {
			d.lost()
		}
		nc := pc.Conn()
		if tc, ok := nc.(*tls.Conn); ok {
			nc = tc.NetConn()
		}
		if tc, ok := nc.(*trackedConn); ok {
			tc.established.Store(true)
		}
		if next != nil {
			return next(ctx, pc)
		}
		return nil
	}
}

type trackedConn struct {
	net.Conn
	d           *dialer
	established atomic.Bool // past afterConnect
	closed      atomic.Bool // closed here: its reads and writes fail for that
	goodbye     atomic.Bool // pgx sent Terminate: the server closes it, as asked
}

// terminate is the protocol's Terminate message, the last one pgx writes on a connection it
// gives up. A statement interrupted by its context is one: pgx then reads what the server still
// sends until the server, having read the Terminate, closes the connection (pgconn's
// asyncClose), and that end is no break. (Over TLS this sees ciphertext; there the server's
// close_notify ends the reads before the socket's end is read.)
var terminate = []byte{'X', 0, 0, 0, 4}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.failed(err)
	}
	return n, err
}

func (c *trackedConn) Write(p []byte) (int, error) {
	if bytes.HasSuffix(p, terminate) {
		c.goodbye.Store(true) // before the server can answer it
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		c.failed(err)
	}
	return n, err
}

// failed reports a connection broken under it: the server crashed, was shut down, or ended
// this backend. A timeout is pgx interrupting a call (or a slow server), not a break; nor is
// the end of a connection pgx gave up, whatever ended the call on it (a caller that stopped
// waiting is no sign of the server).
func (c *trackedConn) failed(err error) {
	var ne net.Error
	if !c.established.Load() || c.closed.Load() || c.goodbye.Load() || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout() || c.d.lost == nil {
		return
	}
	c.established.Store(false) // once per connection
	c.d.lost()
}

func (c *trackedConn) Close() error {
	c.closed.Store(true)
	c.d.mu.Lock()
	delete(c.d.open, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
