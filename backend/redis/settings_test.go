package redis_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// New warns about each server setting that would lose jobs silently (the durability the
// package documents: AOF on, maxmemory-policy noeviction), and only about those.
func TestStartWarnsAboutSettingsThatLoseJobs(t *testing.T) {
	t.Parallel()
	srv := startPrivateRedis(t) // CONFIG SET on the shared server would change it for everyone
	admin := srv.client()
	defer admin.Close()
	tests := []struct {
		name     string
		settings map[string]string // CONFIG SET before New
		warnings []string          // substrings of the WARN lines expected, in any order
	}{
		{name: "AOF and noeviction", settings: map[string]string{
			"appendonly": "yes", "appendfsync": "everysec", "maxmemory-policy": "noeviction",
		}},
		{name: "evicting policy", settings: map[string]string{
			"appendonly": "yes", "appendfsync": "always", "maxmemory-policy": "allkeys-lru",
		}, warnings: []string{"maxmemory-policy"}},
		{name: "no AOF", settings: map[string]string{
			"appendonly": "no", "maxmemory-policy": "noeviction",
		}, warnings: []string{"appendonly"}},
		{name: "AOF never synced", settings: map[string]string{
			"appendonly": "yes", "appendfsync": "no", "maxmemory-policy": "noeviction",
		}, warnings: []string{"appendfsync"}},
		{name: "both", settings: map[string]string{
			"appendonly": "no", "maxmemory-policy": "volatile-ttl",
		}, warnings: []string{"maxmemory-policy", "appendonly"}},
	}
	for _, tt := range tests { // one after another: they share the server's settings
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			for k, v := range tt.settings {
				require.NoError(t, admin.ConfigSet(ctx, k, v).Err())
			}
			var logs gatewaytest.SyncBuffer
			b, err := beanredis.New(ctx, beanredis.Options{
				URL: srv.url(), Prefix: "settings", CommandTimeout: 2 * time.Second,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			})
			require.NoError(t, err)
			// go-redis has one logger per process, the last store's (this one's): its lines
			// about any other client, a parallel test's, land in this log too, marked
			// from=go-redis. Only the store's own warnings are counted.
			require.NoError(t, b.Close())
			var warned []string
			for _, line := range bytes.Split([]byte(logs.String()), []byte("\n")) {
				if bytes.Contains(line, []byte("level=WARN")) && !bytes.Contains(line, []byte("from=go-redis")) {
					warned = append(warned, string(line))
				}
			}
			require.Len(t, warned, len(tt.warnings), "warnings: %q", warned)
			for _, w := range tt.warnings {
				require.Contains(t, logs.String(), "redis: "+w, "warnings: %q", warned)
			}
		})
	}
}
