package redis_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/faulttest"
)

// The backend on a real Redis Cluster of three masters. The Backends are given only the first
// node (plus a second as a spare seed), and their namespaces live on the other two, so every
// call must be routed to the master of the namespace's slot.
func TestCluster(t *testing.T) {
	t.Parallel()
	c := startCluster(t)

	// FUNCTION LOAD reaches every master, not just the one the client was given.
	t.Run("library on every master", func(t *testing.T) {
		c.newBackend(t, c.prefixOn(t, 1), nil, 0)
		for i := range c.Ports {
			admin := c.Node(i)
			libs, err := admin.FunctionList(context.Background(), goredis.FunctionListQuery{}).Result()
			_ = admin.Close()
			require.NoError(t, err)
			require.Len(t, libs, 1, "node %d", i)
		}
	})

	// A master that lost the library (here: FUNCTION FLUSH; a master that is new since New,
	// after a failover or a resharding) gets it loaded again by the next call. The Backend is
	// given a ClusterClient of the caller's own, as Options.Client allows.
	t.Run("library reloaded when lost", func(t *testing.T) {
		cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{c.Addr(0)}, MaxRetries: -1})
		t.Cleanup(func() { _ = cc.Close() })
		b, err := beanredis.New(context.Background(), beanredis.Options{
			Client: cc, Prefix: c.prefixOn(t, 2), CommandTimeout: 5 * time.Second,
		})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		ctx := context.Background()
		id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("a")})
		require.NoError(t, err)

		admin := c.Node(2)
		defer admin.Close()
		require.NoError(t, admin.FunctionFlush(ctx).Err())
		id2, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("b")})
		require.NoError(t, err, "the call after FUNCTION FLUSH reloads the library")
		require.Equal(t, id+1, id2)
	})

	// A reserve waiting on one gateway is woken through another, each way a job can become
	// ready: the publish from the namespace's master reaches the subscription (the safety
	// poll is off).
	t.Run("wake-ups", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int64
		gatewaytest.RunWakeUps(t, func(t *testing.T) (backend.Backend, backend.Backend) {
			prefix := c.prefixOn(t, 1+int(n.Add(1)%2))
			a, b := c.newBackend(t, prefix, nil, 0), c.newBackend(t, prefix, nil, 0)
			beanredis.SetSafetyPoll(b, time.Hour)
			return a, b
		})
	})

	t.Run("conformance", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int64
		backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
			return c.newBackend(t, c.prefixOn(t, 1+int(n.Add(1)%2)), clock, 0) // nodes 1 and 2
		})
	})

	// With wait_replicas the WAIT goes with the FCALL to the master of the namespace's slot, the
	// node whose replicas have the writes. These masters have no replica: a put fails once
	// wait_timeout has passed, though the master stored it, and so does a reserve.
	t.Run("wait_replicas", func(t *testing.T) {
		t.Parallel()
		prefix := c.prefixOn(t, 2)
		waits := func(i int) int64 {
			admin := c.Node(i)
			defer admin.Close()
			stats, err := admin.Info(context.Background(), "commandstats").Result()
			require.NoError(t, err)
			_, rest, ok := strings.Cut(stats, "cmdstat_wait:calls=")
			if !ok {
				return 0
			}
			n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			require.NoError(t, err)
			return n
		}
		before := []int64{waits(0), waits(1), waits(2)}
		opts, err := beanredis.ParseURL(c.url(prefix) + "&wait_replicas=1&wait_timeout=50ms")
		require.NoError(t, err)
		b, err := beanredis.New(context.Background(), opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		ctx := context.Background()
		_, err = b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("a")})
		require.EqualError(t, err, "redis: put: not replicated: 0 of 1 replicas acknowledged within 50ms (the change is applied on the master and may be lost in a failover)")
		require.Equal(t, []int64{before[0], before[1], before[2] + 1}, []int64{waits(0), waits(1), waits(2)})
		s := backend.NewSessionIDs().Next()
		require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
		_, err = b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
		require.EqualError(t, err, "redis: reserve: not replicated: 0 of 1 replicas acknowledged within 50ms (the change is applied on the master and may be lost in a failover)", "a reserve waits too")
		require.Equal(t, []int64{before[0], before[1], before[2] + 2}, []int64{waits(0), waits(1), waits(2)})
		holder, err := b.JobHolder(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, s, holder, "the reservation is applied on the master nevertheless")
	})

	t.Run("multigateway", func(t *testing.T) {
		t.Parallel()
		prefix := c.prefixOn(t, 1)
		gatewaytest.RunMultiGateway(t, func(t *testing.T) backend.Backend {
			return c.newBackend(t, prefix, nil, time.Second)
		})
	})
}

// redisCluster is a Redis Cluster of the test's own: three masters without replicas, killed
// when the test ends.
type redisCluster struct{ *faulttest.RedisCluster }

// startCluster starts the cluster, or skips the test when it cannot (fails it with CI=true).
func startCluster(t *testing.T) *redisCluster {
	t.Helper()
	return &redisCluster{faulttest.StartRedisCluster(t, 3, 0)}
}

// url names the cluster by node 0, with node 1 as a spare seed, as a user would.
func (c *redisCluster) url(prefix string) string { return c.URL("prefix=" + prefix) }

// prefixOn is a fresh namespace whose slot is served by node i.
func (c *redisCluster) prefixOn(t *testing.T, i int) string {
	t.Helper()
	return c.PrefixOn(c.Addr(i))
}

// newBackend opens a Backend on the cluster under prefix, through ParseURL as the command
// does, closed when the test ends; clock may be nil, lease 0 is the default.
func (c *redisCluster) newBackend(t *testing.T, prefix string, clock backend.Clock, lease time.Duration) *beanredis.Backend {
	t.Helper()
	opts, err := beanredis.ParseURL(c.url(prefix))
	require.NoError(t, err)
	require.True(t, opts.Cluster)
	opts.Clock, opts.LeaseTTL, opts.CommandTimeout = clock, lease, 5*time.Second
	b, err := beanredis.New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}
