package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxProbeTimeout bounds each probe of a database known to be unreachable.
const maxProbeTimeout = time.Second

// isOutage tells the failures that say the database cannot be reached or cannot take writes
// here (a timeout, a broken or refused connection, a server shutting down or in recovery: a
// primary demoted, a standby not yet promoted) from the errors of a statement. After one, the
// pool's connections are dropped and calls fail at once until a probe answers (backend.
// Reachability): a multi-host URL then finds the server that accepts writes.
func isOutage(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, errClosed) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code[:2] == "08", // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutting down, starting up
			pgErr.Code == "25006": // read-only transaction: a server in recovery
			return true
		}
		return false
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	return errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) || errors.As(err, &netErr) ||
		errors.As(err, &connectErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed)
}

// dropConnections runs when the database is found unreachable: the pool's connections and the
// listener's may lead to a server that is gone or cut off, where each would wait for its own
// timeout; new ones find the server of a multi-host URL that accepts writes. (With a pool that
// was given in Options, only the pool is reset.) The reserves and touches not known durable
// are reported: the server that has them may be gone (durability.go).
func (b *Backend) dropConnections(error) {
	b.serverLost()
	b.pool.Reset()
	b.dialer.closeAll()
	select {
	case b.listenKick <- struct{}{}:
	default:
	}
}
