package backend

import "context"

// Pinger is an optional interface of a Backend kept in a server (Redis, PostgreSQL): Ping
// reports whether the store answers now, cheaply, for readiness checks. A Backend without it
// is in the process and always reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}
