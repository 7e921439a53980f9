package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// For the tests of package redis_test (helpers_test.go), and for this package's own.
var (
	RedisURL       = redisURL
	RequireRedis   = requireRedis
	TestClient     = testClient
	NewPrefix      = newPrefix
	NewTestBackend = newTestBackend
)

// SetSafetyPoll changes how long b's waiting reserves trust their notifications, so that a
// test can make a lost wake-up wait far longer than the test may take.
func SetSafetyPoll(b *Backend, d time.Duration) { b.safetyPoll = d }

// DropPublishes makes b ignore every publish, so that a test sees what due times and the
// wake-ups waiters pass on deliver by themselves.
func DropPublishes(b *Backend) { b.dropPub.Store(true) }

// SetBeforeTimer makes a waiting reserve run f before it sets each of its timers (a due time, its
// DEADLINE_SOON, its timeout), so that a test can move a fake clock at that moment. Set it before
// the first reserve that waits.
func SetBeforeTimer(b *Backend, f func()) { b.waiters.beforeTimer = f }

// WaiterStates describes b's waiting reserves, for a test that finds one waiting too long: per
// waiter its session, whether a wake-up is pending, whether it is idle and the due time (ms) it
// is armed for (-1: none), in session order.
func WaiterStates(b *Backend) string {
	ws := b.waiters
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []string
	for s, w := range ws.bySession {
		at := int64(-1)
		if w.slot != nil {
			at = w.slot.at
		}
		out = append(out, fmt.Sprintf("%s: pending %d, idle %v, armed for %d", s, len(w.ch), w.idle, at))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// SetBeforeSend makes every batch's leader run f before it takes the queue, so that a test can
// hold a batch back while other calls queue up behind it. The batcher reads f without a lock:
// set it before the Backend's first call.
func SetBeforeSend(b *Backend, f func()) { b.batch.SetBeforeSend(f) }

// redisURL is the shared test server; tests only touch keys under their own random prefix.
func redisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// testClient is a plain go-redis client of the server at url, for a test to look at or clean
// up its keys; the caller closes it.
func testClient(url string) (*goredis.Client, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return goredis.NewClient(opts), nil
}

// requireRedis skips (or fails in CI) when the shared Redis cannot be reached.
func requireRedis(t testing.TB) {
	t.Helper()
	c, err := testClient(redisURL())
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		backendtest.Unavailable(t, "Redis at %s unreachable: %v", redisURL(), err)
	}
}

// deleteNamespace removes every key of a namespace (never FLUSHDB: the server is shared).
func deleteNamespace(url, prefix string) {
	c, err := testClient(url)
	if err != nil {
		return
	}
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

// newPrefix is a fresh namespace whose keys are deleted when the test ends.
func newPrefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "bgtest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteNamespace(redisURL(), prefix) })
	return prefix
}

// newTestBackend opens a Backend on the shared Redis under prefix, closed when the test ends;
// clock may be nil, lease 0 is the default.
func newTestBackend(t testing.TB, prefix string, clock backend.Clock, lease time.Duration) *Backend {
	t.Helper()
	requireRedis(t)
	b, err := New(context.Background(), Options{
		URL: redisURL(), Prefix: prefix, Clock: clock, LeaseTTL: lease, CommandTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// UnendedSessions lists the sessions whose end failed and is still to be retried.
func UnendedSessions(b *Backend) []backend.SessionID {
	b.unendedMu.Lock()
	defer b.unendedMu.Unlock()
	return slices.Collect(maps.Keys(b.unended))
}

// ReapGrace is how long a lease must have been seen missing before its process is reaped.
func ReapGrace(b *Backend) time.Duration { return b.reapGrace() }
