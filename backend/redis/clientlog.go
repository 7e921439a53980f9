package redis

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/internal/failurelog"
)

// clientLog carries go-redis's own log lines (dial failures while Redis is down, sentinels
// that do not answer, pool notices) to the gateway's logger instead of go-redis's default: the
// standard log package on stderr, outside the configured format and level.
//
// A failure to get a connection is logged at debug level only: the call that wanted the
// connection fails with the same error, which beangate logs (a failed command, the store found
// unreachable, an attempt to reach it at start). Other failures repeat on every dial while a
// server is down, so they go through a failurelog; the rest are warnings.
type clientLog struct {
	log      *slog.Logger
	failures *failurelog.Log
}

func newClientLog(log *slog.Logger) clientLog {
	return clientLog{log: log, failures: failurelog.New(log, failurelog.Options{Level: slog.LevelWarn, Counted: "more go-redis calls failed"})}
}

func (l clientLog) Printf(ctx context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	switch {
	case strings.HasPrefix(format, "redis: connection pool: failed to "):
		l.log.DebugContext(ctx, msg, "from", "go-redis")
	case strings.Contains(format, "failed"):
		l.failures.Failed(msg, nil, "from", "go-redis")
	default:
		l.log.WarnContext(ctx, msg, "from", "go-redis")
	}
}

// routeClientLog installs log as go-redis's logger. go-redis keeps one logger per process, so
// it is set only for a caller that gave a logger (the server); the last one set wins.
func routeClientLog(log *slog.Logger) {
	if log != nil {
		goredis.SetLogger(newClientLog(log))
	}
}
