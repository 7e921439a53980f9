package redis

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// go-redis's lines reach the given logger, marked from=go-redis: a failure to get a connection
// at debug level only (the caller's error says it), another failure once for a run of them,
// anything else as a warning each time.
func TestClientLogLevels(t *testing.T) {
	const dial = "redis: connection pool: failed to dial after %d attempts: %v"
	for _, tt := range []struct {
		name   string
		format string
		args   []any
		level  slog.Level // the logger's
		lines  int        // of 20 alike
		first  string
	}{
		{"dial failure", dial, []any{5, "connection refused"}, slog.LevelDebug, 20,
			`level=DEBUG msg="redis: connection pool: failed to dial after 5 attempts: connection refused" from=go-redis`},
		{"dial failure at info", dial, []any{5, "connection refused"}, slog.LevelInfo, 0, ""},
		{"sentinel failure", "sentinel: GetMasterAddrByName name=%q failed: %s", []any{"ha", "i/o timeout"}, slog.LevelInfo, 1,
			`level=WARN msg="sentinel: GetMasterAddrByName name=\"ha\" failed: i/o timeout" from=go-redis`},
		{"notice", "sentinel: new master=%q addr=%q", []any{"ha", "127.0.0.1:6380"}, slog.LevelInfo, 20,
			`level=WARN msg="sentinel: new master=\"ha\" addr=\"127.0.0.1:6380\"" from=go-redis`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf gatewaytest.SyncBuffer
			l := newClientLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}})))
			for range 20 {
				l.Printf(context.Background(), tt.format, tt.args...)
			}
			if tt.lines == 0 {
				require.Empty(t, buf.String())
				return
			}
			got := strings.Split(strings.TrimSpace(buf.String()), "\n")
			require.Len(t, got, tt.lines, buf.String())
			require.Equal(t, tt.first, got[0])
		})
	}
}
