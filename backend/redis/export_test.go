package redis

import (
	"context"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// For the tests of package redis_test (helpers_test.go), and for this package's own.
var (
	RedisURL        = redisURL
	RequireRedis    = requireRedis
	DeleteNamespace = deleteNamespace
)

// SetSafetyPoll changes how long b's waiting reserves trust their notifications, so that a
// test can make a lost wake-up wait far longer than the test may take.
func SetSafetyPoll(b *Backend, d time.Duration) { b.safetyPoll = d }

// redisURL is the shared test server; tests only touch keys under their own random prefix.
func redisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// requireRedis skips (or fails in CI) when the shared Redis cannot be reached.
func requireRedis(t testing.TB) {
	t.Helper()
	opts, err := goredis.ParseURL(redisURL())
	require.NoError(t, err)
	c := goredis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s unreachable (CI=true, so this fails): %v", redisURL(), err)
		}
		t.Skipf("Redis at %s unreachable, skipping (set CI=true to fail instead): %v", redisURL(), err)
	}
}

// deleteNamespace removes every key of a namespace (never FLUSHDB: the server is shared).
func deleteNamespace(url, prefix string) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, "{"+prefix+"}:*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		c.Unlink(ctx, keys[:n]...)
		keys = keys[n:]
	}
}
