package redis_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	beanredis "github.com/beangate/beangate/backend/redis"
)

// The spread layout (layout=spread) on a real Redis Cluster of three masters: the whole
// conformance suite, each case's tubes placed on different masters (asserted after each case).
func TestSpread(t *testing.T) {
	t.Parallel()
	c := startCluster(t)

	t.Run("conformance", func(t *testing.T) {
		t.Parallel()
		backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
			prefix := newClusterPrefix(t)
			b := c.newSpreadBackend(t, prefix, "", clock, 0)
			t.Cleanup(func() { c.requireTubesSpanMasters(t, b, prefix) })
			return b
		}, backendtest.WithoutImport(), backendtest.WithoutCases(crossBucketMoves...))
	})
}

// crossBucketMoves are the cases that move jobs between tubes placed in different buckets,
// which the spread layout refuses (an error) until moved ids are found through forwarding
// entries (docs/redis-cluster.md).
var crossBucketMoves = []string{
	"PolicyUnique/AJobMovedAwayNoLongerMatches",
	"PolicyUnique/AJobMovedInIsFiledUnderItsNewTubesPolicy",
	"Bulk/MovingEveryJobOutOfATubeNobodyUsesMakesItVanish",
	"Bulk/AMovedReadyJobGoesToAReserveWaitingOnItsNewTube",
	"Bulk/MoveJobsKeepsIDPriorityStateDueTimeAndCounters",
}

// newClusterPrefix is a fresh namespace (the cluster is the test's own: no clean-up).
func newClusterPrefix(t *testing.T) string {
	t.Helper()
	return "spread-" + backend.NewSessionIDs().Next().Process()
}

// spreadURL is the cluster's URL with layout=spread and the given extra parameters.
func (c *redisCluster) spreadURL(prefix, extra string) string {
	u := c.url(prefix) + "&layout=spread"
	if extra != "" {
		u += "&" + extra
	}
	return u
}

// newSpreadBackend opens a Backend of the spread layout on the cluster, closed when the test
// ends; extra adds URL parameters (shards=N).
func (c *redisCluster) newSpreadBackend(t testing.TB, prefix, extra string, clock backend.Clock, lease time.Duration) *beanredis.Backend {
	t.Helper()
	opts, err := beanredis.ParseURL(c.spreadURL(prefix, extra))
	require.NoError(t, err)
	require.Equal(t, beanredis.LayoutSpread, opts.Layout)
	opts.Clock, opts.LeaseTTL, opts.CommandTimeout = clock, lease, 5*time.Second
	b, err := beanredis.New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// clusterClient is a client of the whole cluster, closed when the test ends.
func (c *redisCluster) clusterClient(t testing.TB) *goredis.ClusterClient {
	t.Helper()
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{c.Addr(0), c.Addr(1)}})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// requireTubesSpanMasters asserts that the tubes placed in prefix (every tube a case used) sit
// on as many masters as they can: each on its own while there are at most as many tubes as
// masters, so a case of two or more tubes always spans two masters or more.
func (c *redisCluster) requireTubesSpanMasters(t testing.TB, b *beanredis.Backend, prefix string) {
	t.Helper()
	cc := c.clusterClient(t)
	records, err := cc.HGetAll(context.Background(), "{"+prefix+"}:place").Result()
	require.NoError(t, err)
	masters := map[string]bool{}
	for tube := range records {
		ms, err := b.TubeMasters(context.Background(), tube)
		require.NoError(t, err)
		require.NotEmpty(t, ms, "tube %q has a record", tube)
		for _, m := range ms {
			masters[m] = true
		}
	}
	want := min(len(records), 3)
	require.GreaterOrEqual(t, len(masters), want, "tubes %v over masters %v", slices.Sorted(maps.Keys(records)), masters)
}
