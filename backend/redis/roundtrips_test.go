package redis_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/internal/faulttest"
)

// roundTrips counts a client's round trips to Redis: each command sent alone, and each
// pipeline; and the WAITs it sends. A new connection's handshake (HELLO, CLIENT SETINFO) is not
// a command's: go-redis dials a second connection for the first pipeline (with wait_replicas, the
// first state change), once.
type roundTrips struct{ n, waits atomic.Int64 }

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() != "hello" {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() != "client" {
			r.n.Add(1)
		}
		for _, c := range cmds {
			if c.Name() == "wait" {
				r.waits.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// newCountedBackend opens a Backend on a fresh namespace of the shared Redis whose client counts
// its round trips. Its lease is a minute, so that no heartbeat or reaper call falls within the
// test.
func newCountedBackend(t *testing.T) (*beanredis.Backend, *roundTrips) {
	t.Helper()
	requireRedis(t)
	return newCountedBackendOn(t, redisURL(), 0)
}

// newCountedBackendOn is newCountedBackend on the Redis at url, with Options.WaitReplicas.
func newCountedBackendOn(t *testing.T, url string, waitReplicas int) (*beanredis.Backend, *roundTrips) {
	t.Helper()
	opts, err := goredis.ParseURL(url)
	require.NoError(t, err)
	opts.Protocol, opts.MaxRetries = 2, -1 // as New sets them for a client of its own
	client := goredis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	rt := &roundTrips{}
	client.AddHook(rt)
	b, err := beanredis.New(context.Background(), beanredis.Options{
		Client: client, Prefix: newPrefix(t), LeaseTTL: time.Minute, CommandTimeout: 5 * time.Second,
		WaitReplicas: waitReplicas,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b, rt
}

// Every protocol command costs at most one Redis round trip (one that waits for a job takes
// one per try, and the connection's first command one more, to begin its session). With
// wait_replicas (a master and its replica) too: the WAIT goes in the same round trip, and only
// with the state changes a client is told of.
func TestAtMostOneRoundTripPerCommand(t *testing.T) {
	t.Parallel()
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		b, rt := newCountedBackend(t)
		checkRoundTripsPerCommand(t, b, rt, false)
	})
	t.Run("wait_replicas=1", func(t *testing.T) {
		t.Parallel()
		pair := faulttest.StartRedisPair(t, roundTripPairPorts)
		b, rt := newCountedBackendOn(t, pair.PlainURL("127.0.0.1", ""), 1)
		checkRoundTripsPerCommand(t, b, rt, true)
	})
}

func checkRoundTripsPerCommand(t *testing.T, b *beanredis.Backend, rt *roundTrips, waits bool) {
	c := dialWire(t, startGateway(t, b))
	line, _ := c.do("use default") // begins the session
	require.Equal(t, "USING default", line)

	for _, tt := range []struct {
		send, want string
		waits      bool // a state change a client is told of, or a reserve (which may make one)
	}{
		{"put 0 0 60 1\r\nx", "INSERTED 1", true},
		{"put 0 3600 60 1\r\nx", "INSERTED 2", true},
		{"peek 1", "FOUND 1 1", false},
		{"peek-ready", "FOUND 1 1", false},
		{"peek-delayed", "FOUND 2 1", false},
		{"reserve", "RESERVED 1 1", true},
		{"touch 1", "TOUCHED", true},
		{"release 1 0 0", "RELEASED", true},
		{"reserve-with-timeout 5", "RESERVED 1 1", true},
		{"bury 1 0", "BURIED", true},
		{"peek-buried", "FOUND 1 1", false},
		{"kick 1", "KICKED 1", true},
		{"reserve-job 1", "RESERVED 1 1", true},
		{"stats-job 1", "OK", false},
		{"delete 1", "DELETED", true},
		{"kick-job 2", "KICKED", true},
		{"stats-tube default", "OK", false},
		{"stats", "OK", false},
		{"list-tubes", "OK", false},
		{"list-tube-used", "USING default", false},
		{"list-tubes-watched", "OK", false},
		{"watch other", "WATCHING 2", false},
		{"ignore other", "WATCHING 1", false},
		{"use other", "USING other", false},
		{"pause-tube default 0", "PAUSED", true},
		{"reserve-with-timeout 0", "RESERVED 2 1", true},
		{"delete 2", "DELETED", true},
		{"reserve-with-timeout 0", "TIMED_OUT", true},
	} {
		before, waitsBefore := rt.n.Load(), rt.waits.Load()
		line, _ := c.do(tt.send)
		require.Regexp(t, "^"+tt.want+"( |$)", line, tt.send)
		require.LessOrEqual(t, rt.n.Load()-before, int64(1), "round trips of %q", tt.send)
		want := int64(0)
		if waits && tt.waits {
			want = 1
		}
		require.Equal(t, want, rt.waits.Load()-waitsBefore, "WAITs of %q", tt.send)
	}
}

// Commands of many connections that arrive while a batch is out go to Redis together, as one
// call. The batch's leader is held back for a while (SetBeforeSend) so that every put is queued
// by the time it sends, whatever the scheduling. The hook is set before any call and switched
// on with an atomic: the batcher reads it unlocked. With wait_replicas, each batch has one WAIT.
func TestCommandsOfManyConnectionsShareRoundTrips(t *testing.T) {
	t.Parallel()
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		b, rt := newCountedBackend(t)
		checkManyConnectionsShareRoundTrips(t, b, rt)
		require.Zero(t, rt.waits.Load())
	})
	t.Run("wait_replicas=1", func(t *testing.T) {
		t.Parallel()
		pair := faulttest.StartRedisPair(t, sharedTripsPairPorts)
		b, rt := newCountedBackendOn(t, pair.PlainURL("127.0.0.1", ""), 1)
		before := rt.waits.Load()
		trips := checkManyConnectionsShareRoundTrips(t, b, rt)
		require.Equal(t, trips, rt.waits.Load()-before, "one WAIT per batch of puts")
	})
}

// checkManyConnectionsShareRoundTrips returns the round trips the puts took.
func checkManyConnectionsShareRoundTrips(t *testing.T, b *beanredis.Backend, rt *roundTrips) int64 {
	var hold atomic.Bool
	beanredis.SetBeforeSend(b, func() {
		if hold.Load() {
			time.Sleep(100 * time.Millisecond)
		}
	})
	addr := startGateway(t, b)
	const conns = 16
	cs := make([]*wireConn, conns)
	for i := range cs {
		cs[i] = dialWire(t, addr)
		line, _ := cs[i].do("use default") // each session begun beforehand
		require.Equal(t, "USING default", line)
	}
	hold.Store(true)

	before := rt.n.Load()
	var wg sync.WaitGroup
	lines := make([]string, conns)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.nc.Write([]byte("put 0 0 60 1\r\nx\r\n")) // do's require must not run here
			lines[i], _ = c.r.ReadString('\n')
		}()
	}
	wg.Wait()
	trips := rt.n.Load() - before
	for i, l := range lines {
		require.Regexp(t, `^INSERTED \d+\r\n$`, l, "connection %d", i)
	}
	require.LessOrEqual(t, trips, int64(3), fmt.Sprintf("%d puts from %d connections", conns, conns))
	t.Logf("%d puts from %d connections: %d round trips", conns, conns, trips)
	return trips
}
