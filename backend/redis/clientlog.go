package redis

import (
	"context"
	"fmt"
	"log/slog"

	goredis "github.com/redis/go-redis/v9"
)

// clientLog carries go-redis's own log lines (dial failures while Redis is down, pool notices)
// to the gateway's logger, as warnings, instead of go-redis's default: the standard log package
// on stderr, outside the configured format and level.
type clientLog struct{ log *slog.Logger }

func (l clientLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "from", "go-redis")
}

// routeClientLog installs log as go-redis's logger. go-redis keeps one logger per process, so
// it is set only for a caller that gave a logger (the server); the last one set wins.
func routeClientLog(log *slog.Logger) {
	if log != nil {
		goredis.SetLogger(clientLog{log: log})
	}
}
