package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/internal/faulttest"
)

// Ports of the fault tests of this package, one block each (see faulttest.FreePorts).
const (
	sentinelPorts = 12500 // 5
	netCutPort    = 12505
	slowPort      = 12506

	waitPairPorts        = 12510 // 2
	roundTripPairPorts   = 12512 // 2
	sharedTripsPairPorts = 12514 // 2
	waitSentinelPorts    = 12520 // 6
)

// sentinelBackend opens a Backend on the set's master through its sentinels, with query added
// to the URL.
func sentinelBackend(t *testing.T, set *faulttest.RedisSet, query string) *beanredis.Backend {
	t.Helper()
	opts, err := beanredis.ParseURL(set.URL(query))
	require.NoError(t, err)
	require.True(t, opts.Sentinel)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := beanredis.New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// The master is killed with SIGKILL under steady load through two gateways; the sentinels
// promote the replica and both gateways follow it (and load the library again when the new
// master's is flushed): every acknowledged job is accounted for,
// except what asynchronous replication may lose in the moment before the kill; no job is
// handed out twice unexplained; ids never go back; while there is no master, commands fail at
// once rather than wait for the failover.
func TestSentinelFailoverUnderLoad(t *testing.T) {
	set := faulttest.StartRedisSet(t, sentinelPorts)
	runSentinelFailover(t, set, "prefix=ha&lease=2s&timeout=3s", 0, func(l *faulttest.Ledger, killed time.Time) {
		// What the replica had not received when the master died is lost: asynchronous
		// replication on loopback lags by far less than this.
		l.AllowLoss(killed.Add(-time.Second), killed)
	})
}

// The same failover with wait_replicas=1, and two replicas, so that the promoted master still
// has one to acknowledge its writes: nothing acknowledged is lost, no job comes back after an
// acknowledged delete, and no reservation is forgotten (which would hand its job to a second
// worker while the first holds it).
func TestSentinelFailoverWaitReplicas(t *testing.T) {
	set := faulttest.StartRedisSetOf(t, waitSentinelPorts, 2)
	runSentinelFailover(t, set, "prefix=ha&lease=2s&timeout=3s&wait_replicas=1&wait_timeout=500ms", 1, func(*faulttest.Ledger, time.Time) {})
}

// runSentinelFailover runs steady load through two gateways on set with the URL query, kills
// the master with SIGKILL, lets allow name what the kill may lose, flushes the promoted
// master's library, drains and checks the ledger. Before the checks through the gateways it
// waits until the promoted master has replicas online (the replicas the sentinels move to it).
func runSentinelFailover(t *testing.T, set *faulttest.RedisSet, query string, replicas int, allow func(l *faulttest.Ledger, killed time.Time)) {
	gws := []faulttest.Gateway{
		faulttest.StartGateway(t, "gw1", sentinelBackend(t, set, query)),
		faulttest.StartGateway(t, "gw2", sentinelBackend(t, set, query)),
	}
	ledger := faulttest.NewLedger(3 * time.Second)
	load := &faulttest.Load{Ledger: ledger, Gateways: gws}
	load.Start()
	time.Sleep(2 * time.Second)

	master, err := set.Master()
	require.NoError(t, err)
	killed := time.Now()
	ledger.Fault("master kill -9")
	set.Kill9(master)
	allow(ledger, killed)
	promoted := set.WaitPromoted(master, 30*time.Second)
	t.Logf("sentinels promoted %d %v after the kill", promoted, time.Since(killed).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	// A master without the library (one that never had it, or flushed) is given it by the
	// first call that misses it.
	c := set.Client(promoted)
	require.NoError(t, c.FunctionFlush(context.Background()).Err())
	_ = c.Close()
	time.Sleep(time.Second)
	load.Stop()
	// The master the sentinels name now: on a loaded machine they may have failed over once
	// more (down-after-milliseconds is 1 s here), which the ledger must survive as well.
	now, err := set.Master()
	require.NoError(t, err)
	set.WaitOnlineReplicas(now, replicas, 10*time.Second)
	faulttest.RequireWakeUp(t, gws[1], gws[0]) // the subscription moved too
	n := load.Drain(t, gws[1], 4*time.Second)
	t.Logf("drained %d jobs", n)
	v := ledger.Check(t)
	require.Positive(t, v.Recovery["master kill -9"], "some gateway never recovered")
	for gw, e := range v.Errors {
		require.Less(t, e.Slowest, 4*time.Second, "%s held a client waiting for the failover", gw)
	}
}

// faultStore opens Backends on a private Redis through url(host), with a 1 s lease and a 2 s
// command timeout.
func faultStore(url func(host, query string) string) faulttest.Store {
	const query = "prefix=ha&lease=1s&timeout=2s"
	return faulttest.Store{
		Lease: time.Second, CommandTimeout: 2 * time.Second,
		Open: func(t *testing.T, host string) backend.Backend {
			t.Helper()
			opts, err := beanredis.ParseURL(url(host, query))
			require.NoError(t, err)
			b, err := beanredis.New(context.Background(), opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			return b
		},
	}
}

// A silent network cut between one gateway and Redis, longer than the lease (see
// faulttest.RunNetCut).
func TestNetworkCutFromRedis(t *testing.T) {
	server := faulttest.StartRedis(t, netCutPort)
	faulttest.RunNetCut(t, faultStore(server.PlainURL), faulttest.NewNetCut(t, netCutPort))
}

// Redis 50 ms away (a round trip): replies stay correct (see faulttest.RunSlowStore).
func TestSlowRedis(t *testing.T) {
	faulttest.StartRedis(t, slowPort)
	link := faulttest.SlowLink(t, faulttest.Addr(slowPort), 25*time.Millisecond)
	faulttest.RunSlowStore(t, faultStore(func(_, query string) string {
		return "redis://" + link + "/0?" + query
	}), 25*time.Millisecond)
}
