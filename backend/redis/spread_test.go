package redis_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway/gatewaytest"
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

	// The gateway suites over the spread layout (the transcripts name literal job ids, which
	// this layout gives otherwise: they run through beandiff, which labels ids).
	t.Run("wake-ups", func(t *testing.T) {
		t.Parallel()
		gatewaytest.RunWakeUps(t, func(t *testing.T) (backend.Backend, backend.Backend) {
			prefix := newClusterPrefix(t)
			a, b := c.newSpreadBackend(t, prefix, "", nil, time.Second), c.newSpreadBackend(t, prefix, "", nil, time.Second)
			beanredis.SetSafetyPoll(b, time.Hour)
			return a, b
		})
	})
	t.Run("multigateway", func(t *testing.T) {
		t.Parallel()
		prefix := newClusterPrefix(t)
		gatewaytest.RunMultiGateway(t, func(t *testing.T) backend.Backend {
			return c.newSpreadBackend(t, prefix, "", nil, time.Second)
		})
	})
	t.Run("policies", func(t *testing.T) {
		t.Parallel()
		gatewaytest.RunPolicies(t, func(t *testing.T) (backend.Backend, backend.Backend) {
			prefix := newClusterPrefix(t)
			return c.newSpreadBackend(t, prefix, "", nil, time.Second), c.newSpreadBackend(t, prefix, "", nil, time.Second)
		})
	})
	t.Run("timed differential", func(t *testing.T) {
		t.Parallel()
		gatewaytest.RunTimedDifferential(t, func(t *testing.T) backend.Backend {
			return c.newSpreadBackend(t, newClusterPrefix(t), "", nil, 0)
		})
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

// A namespace keeps the layout it was made with: a gateway whose URL asks for the other one
// refuses to start (a configuration mistake, backend.ErrBadOptions), either way round.
func TestSpreadLayoutMismatchIsRefused(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	open := func(prefix string, spread bool) error {
		u := c.url(prefix)
		if spread {
			u = c.spreadURL(prefix, "")
		}
		opts, err := beanredis.ParseURL(u)
		require.NoError(t, err)
		b, err := beanredis.New(ctx, opts)
		if err == nil {
			_, err = b.Put(ctx, backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte("x")})
			require.NoError(t, err)
			require.NoError(t, b.Close())
			return nil
		}
		return err
	}
	tests := []struct {
		name          string
		first, second bool // spread?
	}{
		{"a spread namespace refuses a one-slot gateway", true, false},
		{"a one-slot namespace refuses a spread gateway", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := newClusterPrefix(t)
			require.NoError(t, open(prefix, tt.first))
			require.NoError(t, open(prefix, tt.first), "the same layout again starts")
			require.ErrorIs(t, open(prefix, tt.second), backend.ErrBadOptions)
		})
	}
}

// A job's id names its bucket (id mod 1024 is a bucket of its tube's record), and the ids one
// gateway hands out increase in the order it acknowledges the puts, across buckets on
// different masters.
func TestSpreadIDsNameTheirBucketAndIncreasePerGateway(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	prefix := newClusterPrefix(t)
	a := c.newSpreadBackend(t, prefix, "", nil, 0)
	other := c.newSpreadBackend(t, prefix, "", nil, 0)
	cc := c.clusterClient(t)
	tubes := []string{"t0", "t1", "t2"}
	var last uint64
	for i := range 30 {
		tube := tubes[i%len(tubes)]
		// Another gateway's puts raise some buckets' sequences: a's ids must still increase.
		if i%4 == 0 {
			_, err := other.Put(ctx, backend.PutParams{Tube: tubes[(i+1)%len(tubes)], TTR: time.Minute, Body: []byte("o")})
			require.NoError(t, err)
		}
		id, err := a.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		require.Greater(t, id, last, "put %d", i)
		last = id
		rec, err := cc.HGet(ctx, "{"+prefix+"}:place", tube).Result()
		require.NoError(t, err)
		require.Contains(t, rec, strconv.FormatUint(id%1024, 10)+";", "id %d of tube %s, record %q", id, tube, rec)
		st, err := a.JobStats(ctx, id)
		require.NoError(t, err, "found by its id alone")
		require.Equal(t, tube, st.Tube)
	}
	masters := map[string]bool{}
	for _, tube := range append(tubes, backend.DefaultTube) {
		ms, err := a.TubeMasters(ctx, tube)
		require.NoError(t, err)
		masters[ms[0]] = true
	}
	require.Len(t, masters, 3, "four tubes (default too) over all three masters")
}

// A gateway that dies (Close ends no session: to the others it looks like a crash) holding
// reservations in buckets on different masters has them returned by another gateway's reaper,
// which finds its buckets in the home slot.
func TestSpreadReaperReturnsADeadGatewaysReservations(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	prefix := newClusterPrefix(t)
	dead := c.newSpreadBackend(t, prefix, "", nil, time.Second)
	live := c.newSpreadBackend(t, prefix, "", nil, time.Second)
	s := backend.NewSessionIDs().Next()
	require.NoError(t, dead.BeginSession(ctx, s, backend.SessionInfo{}))
	tubes := []string{"r0", "r1", "r2"}
	var ids []uint64
	for _, tube := range tubes {
		id, err := dead.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Hour, Body: []byte(tube)})
		require.NoError(t, err)
		ids = append(ids, id)
		require.NoError(t, dead.WatchTube(ctx, s, tube))
	}
	for range tubes {
		j, err := dead.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: append([]string{backend.DefaultTube}, tubes...)})
		require.NoError(t, err)
		require.Contains(t, ids, j.ID)
	}
	require.NoError(t, dead.Close())
	require.Eventually(t, func() bool {
		st, err := live.Stats(ctx)
		return err == nil && st.ReadyJobs == 3 && st.ReservedJobs == 0
	}, 10*time.Second, 50*time.Millisecond, "the reaper returns all three reservations")
	masters := map[string]bool{}
	for _, tube := range tubes {
		ms, err := live.TubeMasters(ctx, tube)
		require.NoError(t, err)
		masters[ms[0]] = true
	}
	require.Greater(t, len(masters), 1, "the reservations were on several masters")
}
